import DBus
import Synchronization

/// Collects the signals matching a rule, for tests to look through.
final class SignalLog: Sendable {
    private final class Store: Sendable {
        let messages = Mutex<[DBusMessage]>([])
    }

    private let store: Store
    private let task: Task<Void, Never>

    init(_ connection: DBusConnection, _ rule: DBusMatchRule) async throws {
        let stream = try await connection.signals(matching: rule)
        let store = Store()
        self.store = store
        task = Task {
            do {
                for try await message in stream { store.messages.withLock { $0.append(message) } }
            } catch {}
        }
    }

    deinit { task.cancel() }

    var all: [DBusMessage] { store.messages.withLock { $0 } }

    func count(where predicate: (DBusMessage) -> Bool) -> Int { all.filter(predicate).count }
}
