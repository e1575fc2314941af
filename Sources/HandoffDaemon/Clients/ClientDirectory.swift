import HandoffCore
import HandoffProtocol

/// What the daemon knows of each connected app: who it runs as, its name, and
/// the activity types it declared (NSUserActivityTypes), which decide where a
/// continued activity goes. The wire side of a connection (its outbox,
/// subscriptions, protocol version) is the `ClientGateway`'s.
struct ClientDirectory: Sendable {
    struct Client: Sendable {
        let caller: Caller
        var app: String?
        var handles: Set<ActivityType> = []
    }

    /// Distinct types declared by the connections of one uid together.
    static let maximumDeclaredTypesPerUID = 256
    /// Distinct types declared by all connections together.
    static let maximumDeclaredTypes = 4096

    private(set) var clients: [UInt64: Client] = [:]
    /// Where events for clients go; set once the gateway exists.
    weak var events: (any ClientEvents)?

    var count: Int { clients.count }
    subscript(_ id: UInt64) -> Client? { clients[id] }

    /// Every type declared by a connection that is still open: a declaration
    /// belongs to its connection and goes with it.
    var declared: Set<ActivityType> {
        clients.values.reduce(into: Set()) { $0.formUnion($1.handles) }
    }

    mutating func add(_ caller: Caller) {
        clients[caller.client] = Client(caller: caller)
    }

    mutating func remove(_ id: UInt64) -> Client? {
        clients.removeValue(forKey: id)
    }

    /// Records `hello`: the app's name and the types it handles (replacing those of an earlier `hello`).
    /// - Returns: whether the machine's declared types changed.
    mutating func hello(_ id: UInt64, app: String, handles texts: [String]) throws(ProtocolError) -> Bool {
        guard let client = clients[id] else { return false }
        var handles = Set<ActivityType>()
        for text in texts {
            do { handles.insert(try ActivityType(text)) } catch {
                throw ProtocolError(.invalidParams, "handles: \"\(text)\": \(error)")
            }
        }
        let others = clients.values.filter { $0.caller.client != id }
        let sameUser = others.filter { $0.caller.uid == client.caller.uid }
            .reduce(into: handles) { $0.formUnion($1.handles) }
        guard sameUser.count <= Self.maximumDeclaredTypesPerUID else {
            throw ProtocolError(
                .invalidParams,
                "handles: uid \(client.caller.uid) would declare \(sameUser.count) activity types over its connections; the limit is \(Self.maximumDeclaredTypesPerUID)"
            )
        }
        let everyone = others.reduce(into: handles) { $0.formUnion($1.handles) }
        guard everyone.count <= Self.maximumDeclaredTypes else {
            throw ProtocolError(
                .invalidParams,
                "handles: more than \(Self.maximumDeclaredTypes) activity types declared on this machine; try again later")
        }
        let before = declared
        clients[id]?.app = String(app.prefix(64))
        clients[id]?.handles = handles
        return declared != before
    }

    /// The connections of `uid` that declared `type`, most recently connected first.
    /// A continued activity goes only to its requester's own user (docs/protocol.md, continue).
    func handlers(of type: ActivityType?, uid: UInt32) -> [Client] {
        guard let type else { return [] }
        return clients.values.filter { $0.caller.uid == uid && $0.handles.contains(type) }
            .sorted { $0.caller.client > $1.caller.client }
    }
}

/// Where the daemon's events for clients go: the gateway, which encodes them
/// and applies each connection's subscription.
protocol ClientEvents: AnyObject, Sendable {
    /// A nearby activity appeared, changed or went, for the connections in `audience`
    /// (those whose user may see its account); subscriptions filter further.
    func nearby(_ name: EventName, _ activity: NearbyActivity, audience: [UInt64])
    /// An event for one connection (`continued`, `continueFailed`, `wasContinued`).
    func send(_ name: EventName, _ data: some Encodable & Sendable, to client: UInt64)
    /// A pairing event for the connection that started the attempt (`starter`, when not nil) and for
    /// every connection of `uid` that asked for pairing events in `hello`; each gets it once.
    func pairing(_ name: EventName, _ data: some Encodable & Sendable, uid: UInt32, starter: UInt64?)
}
