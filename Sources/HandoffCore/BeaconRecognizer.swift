/// Recognises beacons of known accounts, in time O(1) in the number of accounts.
///
/// For the epoch window around "now" it precomputes every known account's
/// recognition tags (5 epochs × 8 slots: the accepted epoch ±1, and ±2 so it
/// can tell "too old/new" from "unknown") into a hash table. A payload is
/// then checked in this order:
///
/// 1. length and version nibble: no cryptography;
/// 2. tag lookup: a stranger's or random beacon stops here, still with no cryptography;
/// 3. MAC of each matching entry (HMAC-SHA256, two compressions);
/// 4. epoch window (±1), decryption (one ChaCha20 block), replay window.
///
/// Steps 2 and 3 and the decryption are skipped for a payload heard again:
/// a small cache (`RepeatCache`, emptied whenever the keys change) keeps what
/// the last authenticated payloads opened to. The epoch window and replay
/// checks still run on every payload, so a repeat is still `replayed`.
///
/// It is a value type: the daemon keeps one, typically inside an actor.
public struct BeaconRecognizer: Sendable {
    private struct KnownAccount: Sendable {
        let key: AccountKey
        var resolver: ActivityTypeResolver
    }

    /// The parameters (epoch length) shared with the senders.
    public let configuration: BeaconConfiguration
    private var accounts: [KnownAccount] = []
    private var declaredTypes: Set<ActivityType> = []
    /// The epoch the table is built around, once `refresh(now:)` ran.
    public private(set) var currentEpoch: Epoch?
    /// `window[account * windowWidth + offset + diagnosedEpochSkew]`.
    private var window: [EpochKeys] = []
    /// What the hot loop needs for each `window` row, same indices: plain
    /// values only, the MAC key next to the cipher keys (adjacent cache lines).
    private var hot: [HotKeys] = []

    private struct HotKeys: Sendable {
        let cipher: EpochCipher
        let macKey: HMACKey
    }
    /// Seconds range of `currentEpoch`, to skip `refresh` cheaply.
    private var currentRange: (start: Double, end: Double) = (1, 0)
    private var table = RecognitionTable()
    /// What recently authenticated payloads opened to; emptied on every rebuild.
    private var repeats = RepeatCache()
    /// How many MACs `recognize` has computed: one per tag-table match. Tests
    /// use it to check that only a tag match leads to cryptography.
    private(set) var macEvaluations = 0
    /// The replay state: origins and the sequence numbers they used.
    public private(set) var replayWindow: ReplayWindow

    /// The account of each `window` row, as of the last rebuild.
    private var windowAccounts: [AccountID] = []

    private static let windowWidth = Int(2 * BeaconFormat.diagnosedEpochSkew + 1)

    /// A recogniser for `accounts`. Call `refresh(now:)` or `recognize(_:now:)`
    /// (which refreshes as needed) before the first beacon.
    public init(
        configuration: BeaconConfiguration = .default,
        accounts: [AccountKey] = [],
        replayWindow: ReplayWindow = ReplayWindow()
    ) {
        self.configuration = configuration
        self.replayWindow = replayWindow
        add(contentsOf: accounts)
    }

    /// The known accounts, in the order they were added.
    public var knownAccounts: [AccountKey] { accounts.map(\.key) }

    /// Adds an account, or replaces the one with the same identifier.
    public mutating func add(_ account: AccountKey) {
        add(contentsOf: [account])
    }

    /// Adds several accounts with a single table rebuild.
    public mutating func add(contentsOf newAccounts: some Sequence<AccountKey>) {
        for account in newAccounts {
            let known = KnownAccount(key: account, resolver: ActivityTypeResolver(account: account, declaredTypes: declaredTypes))
            if let index = accounts.firstIndex(where: { $0.key.id == account.id }) {
                accounts[index] = known
            } else {
                accounts.append(known)
            }
        }
        rebuild(reusing: window)
    }

    /// Removes the account with this identifier, if known.
    public mutating func remove(_ id: AccountID) {
        accounts.removeAll { $0.key.id == id }
        rebuild(reusing: window)
    }

    /// Sets the activity types local apps declared; hashes in recognised
    /// beacons resolve through them.
    public mutating func declareActivityTypes(_ types: some Sequence<ActivityType>) {
        declaredTypes = Set(types)
        for index in accounts.indices {
            accounts[index].resolver = ActivityTypeResolver(account: accounts[index].key, declaredTypes: declaredTypes)
        }
    }

    /// Rebuilds the tag table if `now` is in another epoch than the table's,
    /// reusing the keys of epochs that stay in the window, and forgets replay
    /// state of epochs that left it.
    public mutating func refresh(now: Double) {
        let epoch = configuration.epoch(containing: now)
        guard epoch != currentEpoch else { return }
        currentEpoch = epoch
        currentRange = (Double(epoch.startSeconds), Double(epoch.endSeconds))
        rebuild(reusing: window)
        let low = epoch.advanced(by: -BeaconFormat.acceptedEpochSkew).index
        let high = epoch.advanced(by: BeaconFormat.acceptedEpochSkew).index
        replayWindow.retain(epochs: low...high)
    }

    private mutating func rebuild(reusing previous: [EpochKeys]) {
        guard let center = currentEpoch else { return }
        // Index the previous window by (account, epoch) so that the epochs
        // still in the window, and accounts still known, are not recomputed.
        var reusable: [ReuseKey: EpochKeys] = [:]
        for (position, keys) in previous.enumerated() where position / Self.windowWidth < windowAccounts.count {
            reusable[ReuseKey(account: windowAccounts[position / Self.windowWidth], epoch: keys.epoch)] = keys
        }
        var newWindow: [EpochKeys] = []
        newWindow.reserveCapacity(accounts.count * Self.windowWidth)
        var newTable = RecognitionTable(capacity: accounts.count * Self.windowWidth * BeaconFormat.slotCount)
        for (accountIndex, account) in accounts.enumerated() {
            for offsetIndex in 0..<Self.windowWidth {
                let epoch = center.advanced(by: Int64(offsetIndex) - BeaconFormat.diagnosedEpochSkew)
                let keys = reusable[ReuseKey(account: account.key.id, epoch: epoch)]
                    ?? EpochKeys(schedule: account.key.schedule, epoch: epoch)
                newWindow.append(keys)
                for slot in 0..<BeaconFormat.slotCount {
                    newTable.insert(
                        tag: keys.tags[slot],
                        entry: .init(account: accountIndex, epochOffsetIndex: offsetIndex, slot: slot)
                    )
                }
            }
        }
        window = newWindow
        hot = newWindow.enumerated().map { position, keys in
            HotKeys(cipher: keys.cipher, macKey: accounts[position / Self.windowWidth].key.schedule.authenticationKey)
        }
        windowAccounts = accounts.map(\.key.id)
        table = newTable
        repeats.removeAll()
    }

    private struct ReuseKey: Hashable {
        let account: AccountID
        let epoch: Epoch
    }

    /// Recognises a manufacturer-data payload received at `now` (seconds since
    /// the Unix epoch), refreshing the table first if the epoch changed.
    /// An accepted beacon's sequence number is recorded in the replay window.
    public mutating func recognize(_ payload: some Collection<UInt8>, now: Double) throws(BeaconRejection) -> RecognizedBeacon {
        if let result = payload.withContiguousStorageIfAvailable({ bytes in
            Result { () throws(BeaconRejection) in try recognize(bytes: UnsafeRawBufferPointer(bytes), now: now) }
        }) {
            return try result.get()
        }
        let copy = Array(payload)
        let result = copy.withUnsafeBytes { bytes in
            Result { () throws(BeaconRejection) in try recognize(bytes: bytes, now: now) }
        }
        return try result.get()
    }

    /// `recognize(_:now:)` on raw bytes.
    public mutating func recognize(bytes payload: UnsafeRawBufferPointer, now: Double) throws(BeaconRejection) -> RecognizedBeacon {
        guard let header = payload.first else { throw .tooShort(length: 0) }
        guard header >> 4 == BeaconFormat.version else { throw .unsupportedVersion(header >> 4) }
        guard payload.count >= BeaconFormat.payloadLength else { throw .tooShort(length: payload.count) }
        guard payload.count <= BeaconFormat.payloadLength else { throw .tooLong(length: payload.count) }
        if !(now >= currentRange.start && now < currentRange.end) { refresh(now: now) }
        guard let current = currentEpoch else { throw .unknownTag }

        let p = payload.baseAddress!
        let fields: BeaconFields
        let accountIndex: Int
        if let cached = repeats.lookup(p) {
            (fields, accountIndex) = cached
        } else {
            let tag = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: BeaconFormat.tagOffset, as: UInt32.self))
            var matched = false
            var opened: (fields: BeaconFields, account: Int)?
            table.forEach(tag: tag) { entry in
                matched = true
                macEvaluations &+= 1
                let keys = hot[entry.account * Self.windowWidth + entry.epochOffsetIndex]
                guard let fields = BeaconCrypto.open(p, cipher: keys.cipher, slot: entry.slot, macKey: keys.macKey)
                else { return true }
                opened = (fields, entry.account)
                return false
            }
            guard let opened else { throw matched ? .authenticationFailed : .unknownTag }
            repeats.insert(p, fields: opened.fields, account: opened.account)
            (fields, accountIndex) = opened
        }

        let skew = current.distance(to: fields.epoch)
        if skew < -BeaconFormat.acceptedEpochSkew { throw .epochTooOld(beacon: fields.epoch, current: current) }
        if skew > BeaconFormat.acceptedEpochSkew { throw .epochTooNew(beacon: fields.epoch, current: current) }

        let origin = BeaconOrigin(account: windowAccounts[accountIndex], epoch: fields.epoch, device: fields.device)
        guard replayWindow.accept(origin, sequence: fields.sequence) else {
            throw .replayed(origin: origin, sequence: fields.sequence)
        }
        let tag = UInt32(bigEndian: UnsafeRawPointer(p + 1).loadUnaligned(as: UInt32.self))
        return RecognizedBeacon(
            account: origin.account, accountName: accounts[accountIndex].key.name, fields: fields,
            activityType: accounts[accountIndex].resolver.resolve(fields.typeHash), tag: tag
        )
    }
}
