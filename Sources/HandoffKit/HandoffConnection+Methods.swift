import HandoffProtocol

/// Typed wrappers for every method of protocol version 1.
extension HandoffConnection {
    /// Introduces this client; must be the first request. Offers `ProtocolVersion.supported`.
    ///
    /// - Parameters:
    ///   - app: the client's name, shown in the daemon's logs (for example `handoffctl`).
    ///   - handles: the activity types this client can continue.
    /// - Throws: `.protocolError` with `unsupported-version` when the daemon speaks none of them.
    @discardableResult
    public func hello(app: String, handles: [String]? = nil, pairingEvents: Bool? = nil) async throws -> HelloResult {
        let params = HelloParams(
            app: app, versions: Array(ProtocolVersion.supported.reversed()), handles: handles, pairingEvents: pairingEvents)
        let result = try await request(.hello, params, as: HelloResult.self)
        guard ProtocolVersion.supported.contains(result.version) else {
            throw HandoffClientError.invalidResponse("hello chose version \(result.version), which was not offered")
        }
        recordHello(result)
        return result
    }

    /// Publishes a new activity of this connection; it becomes the current one unless `becomeCurrent` is false.
    public func publish(_ params: PublishParams) async throws -> PublishResult {
        try await request(.publish, params, as: PublishResult.self)
    }

    /// Changes fields of one of this connection's activities; absent fields keep their values.
    public func update(_ params: UpdateParams) async throws {
        _ = try await request(.update, params, as: EmptyResult.self)
    }

    /// Stops advertising the activity but keeps it, so `update(becomeCurrent: true)` can bring it back.
    public func resign(id: String) async throws {
        _ = try await request(.resign, ActivityIDParams(id: id), as: EmptyResult.self)
    }

    /// Ends the activity for good.
    public func invalidate(id: String) async throws {
        _ = try await request(.invalidate, ActivityIDParams(id: id), as: EmptyResult.self)
    }

    /// The activities nearby devices of the caller's accounts advertise now.
    public func list() async throws -> ListResult {
        try await request(.list, EmptyParams(), as: ListResult.self)
    }

    /// `list`, with the number of its response among this connection's lines: every event
    /// numbered below it happened before the list was taken, so the list covers it.
    func listWithPosition() async throws -> (result: ListResult, position: UInt64) {
        let position = ResponsePosition()
        let state = self.state
        let result = try await request(.list, EmptyParams(), as: ListResult.self) { _ in
            position.value.withLock { $0 = state.currentLine }
        }
        return (result, position.value.withLock { $0 })
    }

    /// Starts the `appeared`, `updated` and `lost` events on `events`, for `types` (nil: every type).
    /// Subscribing again replaces the filter.
    public func subscribe(types: [String]? = nil) async throws {
        _ = try await request(.subscribe, SubscribeParams(types: types), as: EmptyResult.self)
    }

    /// Stops the events.
    public func unsubscribe() async throws {
        _ = try await request(.unsubscribe, EmptyParams(), as: EmptyResult.self)
    }

    /// The daemon's state, as this caller may see it.
    public func status() async throws -> StatusResult {
        try await request(.status, EmptyParams(), as: StatusResult.self)
    }

    /// This device and the other devices of the caller's accounts (docs/devices.md).
    public func devices() async throws -> DevicesResult {
        try await request(.devices, EmptyParams(), as: DevicesResult.self)
    }

    /// Locks a device out of an account: a new account key here at once, delivered to the
    /// account's other devices when they are next nearby (docs/devices.md, section 7).
    public func removeDevice(_ device: String, account: String? = nil) async throws -> DevicesRemoveResult {
        try await request(.devicesRemove, DevicesRemoveParams(device: device, account: account), as: DevicesRemoveResult.self)
    }

    // MARK: Accounts (the daemon holds the keys)

    /// Creates an account with a fresh key, owned by the caller.
    public func createAccount(name: String) async throws -> AccountInfo {
        try await request(.accountCreate, AccountNameParams(name: name), as: AccountInfo.self)
    }

    /// The accounts the caller may use (every account, for root).
    public func listAccounts() async throws -> AccountListResult {
        try await request(.accountList, EmptyParams(), as: AccountListResult.self)
    }

    /// The transfer code of an account, to import on another device.
    public func exportAccount(name: String) async throws -> AccountExportResult {
        try await request(.accountExport, AccountNameParams(name: name), as: AccountExportResult.self)
    }

    /// Adds an account from a code made by `exportAccount` on another device.
    public func importAccount(code: String, name: String? = nil) async throws -> AccountInfo {
        try await request(.accountImport, AccountImportParams(code: code, name: name), as: AccountInfo.self)
    }

    /// Deletes an account's key from this device.
    public func removeAccount(name: String) async throws {
        _ = try await request(.accountRemove, AccountNameParams(name: name), as: EmptyResult.self)
    }
}
