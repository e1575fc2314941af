#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// Writes a whole file so that readers see either the old contents or the new,
/// never a mix: a temporary file in the same directory with an exact mode,
/// written, fsynced, renamed over the target (or linked to it, when not
/// replacing), and the directory fsynced.
public enum AtomicFile {
    /// Replaces (or creates) `path` with `bytes`.
    /// - Parameters:
    ///   - mode: the new file's permission bits, set exactly whatever the umask
    ///     (0600 for anything secret).
    ///   - replacing: whether an existing file at `path` may be replaced. When
    ///     false the temporary file is hard-linked to `path`, which fails with
    ///     `.fileExists` rather than overwrite anything.
    /// - Throws: the failing call's `Errno`. The temporary file never outlives
    ///   this call. A failed directory `fsync` is reported too, although the
    ///   new file is then already in place.
    public static func write(_ bytes: [UInt8], to path: FilePath, mode: mode_t = 0o600, replacing: Bool = true) throws(Errno) {
        guard let directory = path.removingLastComponent().string.isEmpty ? FilePath(".") : Optional(path.removingLastComponent()),
            let name = path.lastComponent?.string
        else { throw .invalidArgument }
        var random = SystemRandomNumberGenerator()
        let temporary = directory.appending(".\(name).\(UInt64.random(in: .min ... .max, using: &random)).tmp")
        do {
            let descriptor = try FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec, .noFollow],
                permissions: FilePermissions(rawValue: mode))
            try descriptor.closeAfter {
                // The umask can only remove bits; make the mode exact anyway.
                guard fchmod(descriptor.rawValue, mode) == 0 else { throw Errno(rawValue: errno) }
                _ = try descriptor.writeAll(bytes)
                guard fsync(descriptor.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
            if replacing {
                guard rename(temporary.string, path.string) == 0 else { throw Errno(rawValue: errno) }
            } else {
                guard link(temporary.string, path.string) == 0 else { throw Errno(rawValue: errno) }
                unlink(temporary.string)
            }
        } catch {
            unlink(temporary.string)
            throw error as? Errno ?? .ioError
        }
        let fd = open(directory.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Errno(rawValue: errno) }
    }
}
