import Synchronization

/// The adapter settings a peer can change with `Properties.Set`.
///
/// The DBus module checks a Set with a synchronous validator on its own
/// thread, before it stores the value; the validator records the new value
/// here at once, so a method call that follows the Set sees it even before the
/// daemon has acted on the change. Any thread.
final class AdapterSwitches: Sendable {
    struct State: Sendable, Equatable {
        var powered = false
        var discoverable = false
        var discoverableTimeout: UInt32 = 180
        var pairable = true
        var pairableTimeout: UInt32 = 0
        var alias: String
    }

    private let state: Mutex<State>

    init(alias: String) {
        state = Mutex(State(alias: alias))
    }

    var current: State { state.withLock { $0 } }

    var powered: Bool { state.withLock { $0.powered } }

    func update(_ body: (inout State) -> Void) {
        state.withLock { body(&$0) }
    }
}
