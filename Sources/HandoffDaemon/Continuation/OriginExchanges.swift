#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol

/// The origin side of continuations (docs/continuation.md, sections 4 to 6):
/// which activity each of our recent beacons announced, the requests being
/// served, and the limits on them.
struct OriginExchanges: Sendable {
    /// Exchanges served at once; more are refused with `busy`.
    static let maximumExchanges = 4
    /// An exchange not finished this long after its request is forgotten.
    static let exchangeTimeout: Duration = .seconds(10)

    private var server: ContinuationServer
    /// The exchanges being served, each with its timeout.
    private var exchanges: [UInt64: OneShotTimer] = [:]
    private var next: UInt64 = 0

    init(configuration: BeaconConfiguration) {
        server = ContinuationServer(configuration: configuration)
        server.acceptsRekeys = true
    }

    /// Remembers which activity a beacon we are about to advertise announces.
    mutating func didAdvertise(_ payload: [UInt8], account: AccountKey, activity: String, now: Double) {
        server.didAdvertise(payload, account: account, activity: activity, now: now)
    }

    /// Checks a request against our recent beacons.
    /// - Throws: the refusal: `busy` beyond the limit, or what the check found.
    mutating func accept(_ request: [UInt8], now: Double) throws(ExchangeStatus) -> ContinuationServer.Accepted {
        guard exchanges.count < Self.maximumExchanges else { throw .busy }
        return try server.accept(request, now: now)
    }

    /// The sealed response to an accepted request, cut for the link's MTU.
    func respond(to accepted: ContinuationServer.Accepted, with payload: ActivityPayload, mtu: Int) -> (bytes: Int, chunks: [[UInt8]]) {
        let response = server.respond(to: accepted, with: payload)
        return (response.count, ResponseChunks.split(response, session: accepted.session, mtu: mtu))
    }

    /// The sealed response to an accepted introduction, carrying our `card`, cut for the link's MTU.
    func respond(to accepted: ContinuationServer.Accepted, introducing card: DeviceCard, mtu: Int) -> (bytes: Int, chunks: [[UInt8]]) {
        let response = server.respond(to: accepted, introducing: card)
        return (response.count, ResponseChunks.split(response, session: accepted.session, mtu: mtu))
    }

    /// Opens the envelope of an accepted rekey (docs/devices.md, section 7).
    func openRekey(
        _ accepted: ContinuationServer.Accepted, identity: DeviceIdentity, roster: DeviceRoster
    ) throws(RekeyError) -> RekeyEnvelope.Contents {
        try server.openRekey(accepted, identity: identity, roster: roster)
    }

    /// The sealed acknowledgement of a rekey whose new key is installed, cut for the link's MTU.
    func respond(to accepted: ContinuationServer.Accepted, installed contents: RekeyEnvelope.Contents, mtu: Int) -> [[UInt8]] {
        ResponseChunks.split(server.respond(to: accepted, installed: contents), session: accepted.session, mtu: mtu)
    }

    /// Starts timing an exchange; `timedOut` runs if it is not ended within the timeout.
    mutating func begin(timedOut: @escaping @Sendable (UInt64) async -> Void) -> UInt64 {
        next += 1
        let id = next
        var timer = OneShotTimer()
        timer.set(at: .now + Self.exchangeTimeout) { await timedOut(id) }
        exchanges[id] = timer
        return id
    }

    /// Ends an exchange; false when it had already ended or timed out.
    mutating func end(_ id: UInt64) -> Bool {
        guard var timer = exchanges.removeValue(forKey: id) else { return false }
        timer.cancel()
        return true
    }

    mutating func endAll() {
        for id in exchanges.keys { _ = end(id) }
    }
}

extension LocalActivity {
    /// What the continuing device receives (docs/continuation.md, "The payload").
    /// - Throws: `ActivityPayloadError` or an encoding error; publish's checks make both impossible.
    func continuationPayload() throws -> ActivityPayload {
        try ActivityPayload(
            type: type, title: title,
            userInfo: userInfo.isEmpty ? nil : Array(try WireFormat.compactJSON(userInfo)),
            webpageURL: webpageURL?.absoluteString,
            requiredUserInfoKeys: requiredUserInfoKeys.isEmpty ? nil : requiredUserInfoKeys)
    }
}
