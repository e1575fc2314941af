/// One method call awaiting its reply.
final class PendingReply: @unchecked Sendable {
    let id: UInt64
    let call: OpaquePointer
    unowned let core: ConnectionCore
    private var completion: (@Sendable (Result<DBusMessage, DBusError>) -> Void)?

    init(
        id: UInt64, call: OpaquePointer, core: ConnectionCore,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        self.id = id
        self.call = call
        self.core = core
        self.completion = completion
    }

    /// Delivers the result once; later calls do nothing. Loop thread only.
    func resume(_ result: Result<DBusMessage, DBusError>) {
        guard let completion else { return }
        self.completion = nil
        completion(result)
    }
}
