import NIOCore
import Synchronization

/// What ends one stream from outside its relay (its origin app's connection closed, handoffd stopping): the
/// offer's listener, the link channel and the app socket, closed together by `cancel()`; anything
/// registered after that is closed at once. The relay then sees its link cut and ends (`truncated`).
final class StreamHandle: Sendable {
    private let state = Mutex<(cancelled: Bool, closers: [@Sendable () -> Void])>((false, []))

    /// Closes `close` with the stream: at `cancel()`, or now if that already happened.
    func register(_ close: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.closers.append(close)
            return false
        }
        if now { close() }
    }

    func register(_ channel: any Channel) { register { channel.close(promise: nil) } }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func cancel() {
        let closers = state.withLock { state -> [@Sendable () -> Void] in
            state.cancelled = true
            defer { state.closers.removeAll() }
            return state.closers
        }
        for close in closers { close() }
    }
}
