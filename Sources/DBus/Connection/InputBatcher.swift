/// When an event loop gathers input (`DBusConnection.batchInput(within:)`): while messages
/// stream in, the loop drains the socket, then waits until a window has passed since the wake
/// before, so that the next wake reads what came meanwhile in one go. A lone message is read
/// at once, and input is not gathered within two windows of an interactive use of the
/// connection (queued work ran, a method call came in, a reply completed a call), so that an
/// exchange of calls and replies never waits for a window.
///
/// Times are `EventLoop.now()` nanoseconds. The loop thread alone uses it.
struct InputBatcher {
    /// The window in nanoseconds; 0: off.
    private(set) var window: UInt64 = 0
    /// When a socket last woke the loop.
    private var lastInputWake: UInt64 = 0
    /// When the connection was last used interactively.
    private var lastInteraction: UInt64 = 0
    /// Whether the last wake came within two windows of the one before, with no interaction
    /// near: messages are streaming in.
    private(set) var streaming = false
    /// Times the loop waited to gather input (for tests).
    private(set) var gathers: UInt64 = 0

    mutating func setWindow(nanoseconds: UInt64) {
        window = nanoseconds
        streaming = false
    }

    mutating func interacted(at now: UInt64) {
        guard window > 0 else { return }
        lastInteraction = now
        streaming = false
    }

    mutating func inputWoke(at now: UInt64) {
        guard window > 0 else { return }
        streaming = now &- lastInputWake < 2 * window && now &- lastInteraction >= 2 * window
        lastInputWake = now
    }

    /// Until when to wait before the next read, once the socket is drained: a window after the
    /// last wake, but not beyond `nextDeadline` (the next timer or delayed job). Nil: read on at
    /// once. Ends the streaming state either way.
    mutating func gatherUntil(now: UInt64, nextDeadline: UInt64?) -> UInt64? {
        streaming = false
        guard window > 0 else { return nil }
        let until = min(lastInputWake + window, nextDeadline ?? .max)
        guard until > now else { return nil }
        gathers &+= 1
        return until
    }
}
