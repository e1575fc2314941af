#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// Writes a whole file so that readers see either the old contents or the new,
/// never a mix: a temporary file in the same directory with an exact mode,
/// written, fsynced, renamed over the target, and the directory fsynced.
public enum AtomicFile {
    /// Replaces (or creates) `path` with `bytes`.
    /// - Parameter mode: the new file's permission bits (0600 for anything secret).
    public static func write(_ bytes: [UInt8], to path: FilePath, mode: mode_t = 0o600) throws(Errno) {
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
                guard fchmod(descriptor.rawValue, mode) == 0 else { throw Errno(rawValue: errno) }
                _ = try descriptor.writeAll(bytes)
                guard fsync(descriptor.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
            guard rename(temporary.string, path.string) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            unlink(temporary.string)
            throw error as? Errno ?? .ioError
        }
        let fd = open(directory.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }
}
