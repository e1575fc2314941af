import BlueZ
import DBus
import HandoffCore
import HandoffProtocol
import Synchronization

/// What the daemon knows about pairing: the one attempt under way (a daemon runs at most one), and
/// the pairing advertisements heard lately (docs/pairing.md, section 2).
struct PairingState: Sendable {
    /// How long a heard pairing advertisement is remembered.
    static let heardFor: Duration = .seconds(PairingFormat.timeoutSeconds)

    enum Role: Sendable {
        case offer(PairingOfferer, service: PairingGattService?, bound: DBusObjectPath?, mtu: Int)
        case join(inputs: AsyncStream<JoinInput>.Continuation, abort: Abort)
    }

    /// Why the joining side's exchange was stopped from outside (timeout, cancellation): what it tells
    /// the offerer as it takes the link down.
    final class Abort: Sendable {
        private let value = Mutex<PairingFailure?>(nil)
        var code: PairingFailure? { value.withLock { $0 } }
        func set(_ code: PairingFailure) { value.withLock { if $0 == nil { $0 = code } } }
    }

    /// What the joining side's exchange waits for.
    enum JoinInput: Sendable {
        case message([UInt8])
        case answer(Bool)
        case linkLost
    }

    struct Attempt: Sendable {
        let name: String
        let client: UInt64
        let uid: UInt32
        var role: Role
        /// The deadline, or the join's whole exchange.
        var task: Task<Void, Never>?
        /// Set when the attempt is ended from outside (cancel, timeout), for the join's own ending.
        var endedBy: PairingFailure?
        /// The account offered, or the local name asked for in `pair.join` (shown with the number).
        var account: String?
        /// The number, once shown (`pairNumber` sent); a connection that asks for pairing events later gets it too.
        var number: String?
        var numberShown: Bool { number != nil }
        /// The user answered (`pair.confirm`); a second answer is refused.
        var answered = false
    }

    struct Heard: Sendable {
        let advertisement: PairingAdvertisement
        let device: DBusObjectPath
        let when: ContinuousClock.Instant
        /// Failed attempts to connect to it.
        var failures = 0
    }

    var attempt: Attempt?
    /// The last offer that ended without pairing, and why: a write that crosses its end is refused with that code.
    var endedOffer: (name: String, code: PairingFailure)?
    /// The last offer's service being taken down.
    var closing: Task<Void, Never>?
    var counter = 0
    var heard: [Heard] = []

    /// The pairing advertisement the radio should send instead of the beacon, while an offer is open.
    var onAir: RadioAdvertisement?

    mutating func nextName() -> String {
        counter += 1
        return "p\(counter)"
    }

    mutating func hear(_ advertisement: PairingAdvertisement, device: DBusObjectPath, now: ContinuousClock.Instant) {
        heard.removeAll { $0.advertisement == advertisement || now - $0.when > Self.heardFor }
        heard.append(Heard(advertisement: advertisement, device: device, when: now))
    }

    /// The most recently heard offer that is recent enough and whose device `exists`.
    func newest(now: ContinuousClock.Instant, exists: (DBusObjectPath) -> Bool) -> Heard? {
        heard.last { now - $0.when <= Self.heardFor && exists($0.device) }
    }
}
