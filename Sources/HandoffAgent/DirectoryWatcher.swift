#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Tells when anything changes in a set of directory trees, through inotify: the
/// thread sleeps in `poll(2)` until the kernel reports a change; nothing polls on a timer.
///
/// Directories that do not exist yet are watched through their nearest existing
/// ancestor, so that creating `~/.local/share/applications` is noticed too. After
/// each change the watches are renewed (new subdirectories, directories now there).
/// Changes within `settle` of each other are reported once.
public final class DirectoryWatcher: Sendable {
    private let fd: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let directories: [String]
    private let stopped = Mutex(false)

    /// Starts watching `directories`; `onChange` runs on the watcher's own thread.
    /// - Throws: `POSIXError` when inotify is not available.
    public init(directories: [String], settle: Duration = .milliseconds(150), onChange: @escaping @Sendable () -> Void) throws {
        let fd = inotify_init1(Int32(O_CLOEXEC))
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        self.fd = fd
        self.stopPipe = (fds[0], fds[1])
        self.directories = directories
        addWatches()
        let settleMilliseconds = Int32(settle.components.seconds * 1000 + settle.components.attoseconds / 1_000_000_000_000_000)
        let thread = Thread { [self] in run(settleMilliseconds: settleMilliseconds, onChange: onChange) }
        thread.name = "handoff-agent-inotify"
        thread.start()
    }

    /// Stops the thread and closes the inotify descriptor.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        if first { _ = write(stopPipe.write, "x", 1) }
    }

    deinit { stop() }

    private static let mask = UInt32(IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_MODIFY)

    private func addWatches() {
        for directory in directories {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue {
                _ = inotify_add_watch(fd, directory, Self.mask)
                if let enumerator = FileManager.default.enumerator(atPath: directory) {
                    while let relative = enumerator.nextObject() as? String {
                        let full = directory + "/" + relative
                        if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), isDirectory.boolValue {
                            _ = inotify_add_watch(fd, full, Self.mask)
                        }
                    }
                }
            } else {
                // The nearest ancestor that exists: its new children show up as IN_CREATE.
                var ancestor = (directory as NSString).deletingLastPathComponent
                while !ancestor.isEmpty && ancestor != "/" && !FileManager.default.fileExists(atPath: ancestor) {
                    ancestor = (ancestor as NSString).deletingLastPathComponent
                }
                if !ancestor.isEmpty { _ = inotify_add_watch(fd, ancestor, UInt32(IN_CREATE | IN_MOVED_TO)) }
            }
        }
    }

    private func run(settleMilliseconds: Int32, onChange: @Sendable () -> Void) {
        defer {
            close(fd)
            close(stopPipe.read)
            close(stopPipe.write)
        }
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 { return }
            drain(&buffer)
            // Let a burst (an installer writing several files) finish before reading them.
            while true {
                var again = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
                let more = poll(&again, 2, settleMilliseconds)
                if more > 0 && again[1].revents != 0 { return }
                if more > 0 { drain(&buffer) } else if more == 0 || errno != EINTR { break }
            }
            addWatches()
            onChange()
        }
    }

    private func drain(_ buffer: inout [UInt8]) {
        _ = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    }
}
