import CBluetooth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Waits, without blocking Swift's cooperative pool and without sleeping in a loop,
/// until a descriptor is ready: `poll()` on a thread of its own, on the descriptor,
/// an optional wake descriptor (a listener's close) and an eventfd that the waiting
/// task's cancellation signals.
enum DescriptorWait {
    enum Outcome: Equatable, Sendable {
        /// The descriptor has `revents` (which may hold POLLERR or POLLHUP).
        case ready(revents: Int16)
        /// The wake descriptor became readable.
        case woken
        case cancelled
        case timedOut
        /// poll() itself failed.
        case failed(errno: Int32)
    }

    /// Waits for `events` on `descriptor`, at most `timeout` (nil: no limit).
    static func wait(
        for descriptor: Int32, events: Int16, wake: Int32? = nil, timeout: Duration? = nil
    ) async -> Outcome {
        let cancel = cbluetooth_eventfd()
        guard cancel >= 0 else { return .failed(errno: errno) }
        // The cancellation handler may still run while we close `cancel`: it writes only while open.
        let open = Mutex(true)
        defer {
            open.withLock { isOpen in
                isOpen = false
                Glibc.close(cancel)
            }
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                DetachedThread.start {
                    continuation.resume(
                        returning: pollUntilReady(descriptor, events: events, wake: wake, cancel: cancel, timeout: timeout))
                }
            }
        } onCancel: {
            open.withLock { isOpen in
                if isOpen { cbluetooth_eventfd_signal(cancel) }
            }
        }
    }

    /// The blocking part: poll() until something happens or the deadline passes.
    static func pollUntilReady(_ descriptor: Int32, events: Int16, wake: Int32?, cancel: Int32, timeout: Duration?)
        -> Outcome
    {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        var fds = [
            pollfd(fd: descriptor, events: events, revents: 0),
            pollfd(fd: cancel, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake ?? -1, events: Int16(POLLIN), revents: 0),  // fd -1: poll ignores it
        ]
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let left = clock.now.duration(to: deadline)
                guard left > .zero else { return .timedOut }
                milliseconds = left.pollMilliseconds
            }
            for index in fds.indices { fds[index].revents = 0 }
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed(errno: errno)
            }
            if ready == 0 { continue }  // the deadline check above ends the wait
            if fds[2].revents != 0 { return .woken }
            if fds[1].revents != 0 { return .cancelled }
            if fds[0].revents != 0 { return .ready(revents: fds[0].revents) }
        }
    }
}
