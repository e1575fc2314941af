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

    static let maximumDeclaredTypes = 4096

    private(set) var clients: [UInt64: Client] = [:]
    /// Every type declared on this machine. Like an app's Info.plist, a
    /// declaration outlives the connection that made it.
    private(set) var declared: Set<ActivityType> = []
    /// Where events for clients go; set once the gateway exists.
    weak var events: (any ClientEvents)?

    var count: Int { clients.count }
    subscript(_ id: UInt64) -> Client? { clients[id] }

    mutating func add(_ caller: Caller) {
        clients[caller.client] = Client(caller: caller)
    }

    mutating func remove(_ id: UInt64) -> Client? {
        clients.removeValue(forKey: id)
    }

    /// Records `hello`: the app's name and the types it handles.
    /// - Returns: the types declared for the first time on this machine.
    mutating func hello(_ id: UInt64, app: String, handles texts: [String]) throws(ProtocolError) -> Set<ActivityType> {
        var handles = Set<ActivityType>()
        for text in texts {
            do { handles.insert(try ActivityType(text)) } catch {
                throw ProtocolError(.invalidParams, "handles: \"\(text)\": \(error)")
            }
        }
        guard declared.union(handles).count <= Self.maximumDeclaredTypes else {
            throw ProtocolError(
                .invalidParams, "handles: more than \(Self.maximumDeclaredTypes) activity types declared on this machine")
        }
        clients[id]?.app = String(app.prefix(64))
        clients[id]?.handles = handles
        let new = handles.subtracting(declared)
        declared.formUnion(new)
        return new
    }

    /// The connections that declared `type`, most recently connected first.
    func handlers(of type: ActivityType?) -> [Client] {
        guard let type else { return [] }
        return clients.values.filter { $0.handles.contains(type) }.sorted { $0.caller.client > $1.caller.client }
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
}
