#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The pairing messages: `pair.offer`, `pair.join`, `pair.confirm`, `pair.cancel`, and the events
// `pairNumber`, `paired` and `pairFailed` (docs/protocol.md, "Pairing"; the radio side is docs/pairing.md).

/// `pair.offer`: offer one of the caller's accounts to a laptop nearby.
public struct PairOfferParams: Sendable, Codable, Hashable {
    /// The account to give; by default the caller's first account by name.
    public var account: String?
    /// Seconds the attempt may last, 5 to 120; default 120.
    public var timeout: Double?

    public init(account: String? = nil, timeout: Double? = nil) {
        self.account = account
        self.timeout = timeout
    }
}

/// `pair.join`: receive an account from a laptop nearby that offers one.
public struct PairJoinParams: Sendable, Codable, Hashable {
    /// The local name for the account; by default the name the offering laptop sends.
    public var name: String?
    /// Seconds the attempt may last, 5 to 120; default 120.
    public var timeout: Double?

    public init(name: String? = nil, timeout: Double? = nil) {
        self.name = name
        self.timeout = timeout
    }
}

/// The result of `pair.offer` and `pair.join`: the attempt has started; events with the same
/// `pairing` follow on this connection: `pairNumber`, then `paired` or `pairFailed`.
public struct PairStarted: Sendable, Codable, Hashable {
    /// Names this attempt in its events, `pair.confirm` and `pair.cancel`.
    public var pairing: String
    /// The account offered (`pair.offer` only).
    public var account: String?

    public init(pairing: String, account: String? = nil) {
        self.pairing = pairing
        self.account = account
    }
}

/// `pair.confirm`: the user compared the numbers.
public struct PairConfirmParams: Sendable, Codable, Hashable {
    public var pairing: String
    /// True: the numbers are the same, go on. False: refuse.
    public var accept: Bool

    public init(pairing: String, accept: Bool) {
        self.pairing = pairing
        self.accept = accept
    }
}

/// `pair.cancel`: gives up an attempt; its `pairFailed` event follows with code `cancelled`.
public struct PairingParams: Sendable, Codable, Hashable {
    public var pairing: String
    public init(pairing: String) { self.pairing = pairing }
}

/// Which side of a pairing this laptop is.
public enum PairingRole: String, Sendable, Codable, Hashable {
    /// `pair.offer`: this laptop gives one of its accounts.
    case offer
    /// `pair.join`: this laptop receives the other laptop's account.
    case join
}

/// The `pairNumber` event: the number to show the user, who answers with `pair.confirm`.
public struct PairNumberEvent: Sendable, Codable, Hashable {
    public var pairing: String
    /// Six digits, leading zeros kept.
    public var number: String
    /// Whether this laptop offers or joins; absent from daemons before it was added.
    public var role: PairingRole?
    /// The account offered (`offer`), or the local name asked for in `pair.join` (`join`, when one was given).
    public var account: String?

    public init(pairing: String, number: String, role: PairingRole? = nil, account: String? = nil) {
        self.pairing = pairing
        self.number = number
        self.role = role
        self.account = account
    }
}

/// The `pairAnswered` event (connections with `pairingEvents` only): the attempt's user answered with
/// `pair.confirm`, on one of its connections; the others stop asking.
public struct PairAnsweredEvent: Sendable, Codable, Hashable {
    public var pairing: String
    public var accept: Bool

    public init(pairing: String, accept: Bool) {
        self.pairing = pairing
        self.accept = accept
    }
}

/// The `paired` event: the attempt succeeded; `account` is the account the two laptops now share.
public struct PairedEvent: Sendable, Codable, Hashable {
    public var pairing: String
    public var account: AccountInfo

    public init(pairing: String, account: AccountInfo) {
        self.pairing = pairing
        self.account = account
    }
}

/// The `pairFailed` event: the attempt ended without pairing; nothing was stored.
public struct PairFailedEvent: Sendable, Codable, Hashable {
    public var pairing: String
    /// `malformed`, `unexpected`, `commitment-mismatch`, `confirmation-failed`, `refused`, `timeout`,
    /// `busy`, `cancelled`, `conflict`, `authentication-failed`, `disconnected`; treat others as failures too.
    public var code: String
    public var message: String

    public init(pairing: String, code: String, message: String) {
        self.pairing = pairing
        self.code = code
        self.message = message
    }
}
