#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DaemonConfiguration {
    /// Where `handoffd` looks for its configuration when not told otherwise.
    public static let defaultPath = "/etc/handoffd/handoffd.toml"

    /// The largest configuration file accepted (the real one is a few KiB).
    static let maximumFileSize = 1 << 20

    /// Reads and parses a configuration file.
    ///
    /// - Parameter path: the file to read, or nil for ``defaultPath``. A missing
    ///   file at the default path means ``defaults``: a fresh install need not
    ///   have one. A missing file named explicitly is an error.
    public static func load(from path: String? = nil) throws(ConfigurationError) -> DaemonConfiguration {
        try load(from: path, defaultPath: defaultPath)
    }

    /// ``load(from:)`` with another default path (for tests).
    static func load(from path: String?, defaultPath: String) throws(ConfigurationError) -> DaemonConfiguration {
        let file = path ?? defaultPath
        let text: String
        switch readText(file) {
        case .success(let contents):
            text = contents
        case .failure(let error):
            if path == nil, error.problem == .notFound { return .defaults }
            throw error
        }
        return try parse(text, source: file)
    }

    /// The whole file as UTF-8 text.
    static func readText(_ path: String) -> Result<String, ConfigurationError> {
        func failure(_ problem: ConfigurationError.Problem) -> Result<String, ConfigurationError> {
            .failure(ConfigurationError(source: path, problem: problem))
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            return code == ENOENT ? failure(.notFound) : failure(.unreadable(Self.describeErrno(code)))
        }
        defer { close(fd) }

        var status = stat()
        guard fstat(fd, &status) == 0 else { return failure(.unreadable(Self.describeErrno(errno))) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { return failure(.unreadable("not a regular file")) }

        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return failure(.unreadable(Self.describeErrno(errno)))
            }
            bytes += chunk[..<count]
            if bytes.count > maximumFileSize {
                return failure(.unreadable("larger than \(maximumFileSize) bytes"))
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return failure(.unreadable("not UTF-8 text"))
        }
        return .success(text)
    }

    private static func describeErrno(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
