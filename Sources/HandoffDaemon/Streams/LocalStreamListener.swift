import Dispatch
import Glibc
import Synchronization
import SystemPackage

/// A listening socket of `LocalStreamTransport`. Accepting is event-driven (a dispatch read source on the
/// listening descriptor), never a polling loop; connections that arrive before anyone waits are queued, at
/// most `backlog` of them (the rest are closed at once, as a full L2CAP accept queue refuses them).
final class LocalStreamListener: StreamTransportListener, @unchecked Sendable {
    let psm: UInt16
    private let path: String
    private let sendUnit: Int
    private let source: any DispatchSourceRead
    private let queue = DispatchQueue(label: "handoff.stream-listener")
    private let state = Mutex(State())
    static let backlog = 8

    private struct State {
        var closed = false
        var ready: [Int32] = []
        var waiting: [CheckedContinuation<Int32, any Error>] = []
    }

    /// Takes `descriptor`, bound to `path` and listening.
    init(descriptor: Int32, path: String, psm: UInt16, sendUnit: Int) throws {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw LocalStreamTransport.failure("fcntl")
        }
        self.psm = psm
        self.path = path
        self.sendUnit = sendUnit
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptReady(descriptor) }
        // The descriptor closes once the source has stopped watching it; the path goes at once, in `close()`.
        source.setCancelHandler { _ = Glibc.close(descriptor) }
        source.resume()
    }

    deinit { close() }

    private func acceptReady(_ listening: Int32) {
        while true {
            let accepted = Glibc.accept(listening, nil, nil)
            guard accepted >= 0 else { return }  // EAGAIN: nothing more now; other errors: the next event retries.
            _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)  // Glibc does not import accept4.
            enum Action { case resume(CheckedContinuation<Int32, any Error>), keep, drop }
            let action: Action = state.withLock { state in
                if state.closed { return .drop }
                if !state.waiting.isEmpty { return .resume(state.waiting.removeFirst()) }
                guard state.ready.count < Self.backlog else { return .drop }
                state.ready.append(accepted)
                return .keep
            }
            switch action {
            case .resume(let waiter): waiter.resume(returning: accepted)
            case .keep: break
            case .drop: _ = Glibc.close(accepted)
            }
        }
    }

    func accept() async throws -> StreamTransportChannel {
        let descriptor: Int32 = try await withCheckedThrowingContinuation { continuation in
            let result: Result<Int32, StreamTransportError>? = state.withLock { state in
                if state.closed { return .failure(.closed) }
                if !state.ready.isEmpty { return .success(state.ready.removeFirst()) }
                state.waiting.append(continuation)
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
        return StreamTransportChannel(descriptor: FileDescriptor(rawValue: descriptor), sendUnit: sendUnit)
    }

    func close() {
        let pending: (waiting: [CheckedContinuation<Int32, any Error>], ready: [Int32])? = state.withLock { state in
            guard !state.closed else { return nil }
            state.closed = true
            defer { state.waiting = []; state.ready = [] }
            return (state.waiting, state.ready)
        }
        guard let pending else { return }
        // Unlinked now, so no connection reaches this listener after `close()` returns (the socket itself
        // closes a little later, on the source's queue, refusing whatever was queued and not accepted).
        _ = unlink(path)
        source.cancel()
        for descriptor in pending.ready { _ = Glibc.close(descriptor) }
        for waiter in pending.waiting { waiter.resume(throwing: StreamTransportError.closed) }
    }
}
