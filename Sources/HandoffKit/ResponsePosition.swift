import Synchronization

/// Where a response came among its connection's lines, recorded by the request's
/// `onSuccess` on the event loop and read by the task that sent the request.
final class ResponsePosition: Sendable {
    let value = Mutex<UInt64>(0)
}
