#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import HandoffProtocol
import NIOCore
import NIOPosix

/// Why a request to handoffd failed, worded so that the person reading it
/// knows what to do next.
///
/// `HandoffConnection` throws these (and `CancellationError` when the calling
/// task is cancelled). Failures the daemon reports arrive as `.protocolError`
/// with the daemon's `ErrorCode`.
public enum HandoffClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens on the socket: it does not exist (ENOENT) or refuses
    /// connections (ECONNREFUSED, a socket left behind by a stopped daemon).
    case daemonNotRunning(String)
    /// The socket exists but this user may not connect to it (EACCES, EPERM).
    case permissionDenied(String)
    /// Connecting failed for another reason: the socket path and what went wrong.
    case connectFailed(String, reason: String)
    /// The daemon answered the request with an error, or the request broke a
    /// protocol limit before it was sent (`line-too-long`, `invalid-params`).
    case protocolError(ProtocolError)
    /// The connection closed: by `close()`, or because the daemon went away.
    case connectionClosed
    /// The daemon did not answer a request in time.
    case timedOut(Method, after: Duration)
    /// The daemon sent a response this client cannot read.
    case invalidResponse(String)
    /// The app's end of a continuation stream could not be picked up: the socket path handoffd
    /// named, and what went wrong (it waits 30 s for the app, and takes only the app's own uid).
    case streamConnectFailed(String, reason: String)
    /// A continuation stream failed while reading or writing: the link to the other device broke,
    /// the stream was idle too long, or this side already finished or closed it. What went wrong.
    case streamBroken(String)

    public var description: String {
        switch self {
        case .daemonNotRunning:
            "handoffd is not running (start it with: systemctl start handoffd)"
        case .permissionDenied(let path):
            "permission denied on \(path): add yourself to group handoff"
        case .connectFailed(let path, let reason):
            "cannot connect to handoffd at \(path): \(reason)"
        case .protocolError(let error):
            error.description
        case .connectionClosed:
            "handoffd closed the connection (it may have stopped; check with: systemctl status handoffd)"
        case .timedOut(let method, let after):
            "handoffd did not answer \"\(method.rawValue)\" within \(Self.describe(after)) (check with: systemctl status handoffd)"
        case .invalidResponse(let detail):
            "handoffd sent a response this client cannot read: \(detail)"
        case .streamConnectFailed(let path, let reason):
            "cannot open the continuation stream at \(path): \(reason)"
        case .streamBroken(let reason):
            "the continuation stream broke: \(reason)"
        }
    }

    /// The error for a failed `connect(2)` on `socketPath` with `errno` value `code`.
    public static func connectFailure(errno code: Int32, socketPath: String) -> HandoffClientError {
        switch code {
        case ENOENT, ECONNREFUSED:
            .daemonNotRunning(socketPath)
        case EACCES, EPERM:
            .permissionDenied(socketPath)
        default:
            .connectFailed(socketPath, reason: String(cString: strerror(code)))
        }
    }

    /// The error for anything thrown while connecting to `socketPath`.
    static func connectFailure(_ error: any Error, socketPath: String) -> HandoffClientError {
        if let error = error as? HandoffClientError { return error }
        if let error = error as? IOError { return connectFailure(errno: error.errnoCode, socketPath: socketPath) }
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first?.error { return connectFailure(first, socketPath: socketPath) }
            return .daemonNotRunning(socketPath)
        }
        if let error = error as? SocketAddressError, case .unixDomainSocketPathTooLong = error {
            return .connectFailed(socketPath, reason: "the path is too long for a Unix socket")
        }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return .connectFailed(socketPath, reason: "the connection timed out")
        }
        return .connectFailed(socketPath, reason: String(describing: error))
    }

    private static func describe(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds == seconds.rounded() {
            let whole = Int(seconds)
            return whole == 1 ? "1 second" : "\(whole) seconds"
        }
        return "\(seconds) seconds"
    }
}
