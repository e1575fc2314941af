#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Unix file descriptor carried in a D-Bus message (type `h`).
///
/// The value owns its descriptor and closes it when the last reference goes.
/// Sending duplicates it (libdbus sends a copy); receiving yields a fresh
/// descriptor owned by this object. Two values are equal when they refer to
/// the same open file (same device and inode), which is what survives a trip
/// through the bus.
public final class DBusUnixFD: Sendable, Hashable {
    /// The descriptor number, valid for the lifetime of this object.
    public let fileDescriptor: Int32

    /// Takes ownership of `fd`.
    public init(taking fd: Int32) {
        self.fileDescriptor = fd
    }

    /// Duplicates `fd` (with close-on-exec), leaving the caller's descriptor untouched.
    /// - Throws: `DBusError.failed` when `dup` fails.
    public convenience init(duplicating fd: Int32) throws(DBusError) {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            throw DBusError(.failed, "cannot duplicate file descriptor \(fd): \(String(cString: strerror(errno)))")
        }
        self.init(taking: copy)
    }

    deinit { close(fileDescriptor) }

    private var identity: (UInt64, UInt64)? {
        var st = stat()
        guard fstat(fileDescriptor, &st) == 0 else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    public static func == (lhs: DBusUnixFD, rhs: DBusUnixFD) -> Bool {
        if lhs === rhs { return true }
        guard let a = lhs.identity, let b = rhs.identity else { return false }
        return a == b
    }

    public func hash(into hasher: inout Hasher) {
        if let (dev, ino) = identity {
            hasher.combine(dev)
            hasher.combine(ino)
        }
    }
}
