#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The request methods.
public enum Method: String, Sendable, Codable, CaseIterable {
    case hello, publish, update, resign, invalidate, list, subscribe, unsubscribe, status
    case accountCreate = "account.create"
    case accountList = "account.list"
    case accountExport = "account.export"
    case accountImport = "account.import"
    case accountRemove = "account.remove"
    case `continue`
    case continueCancel = "continue.cancel"
    case pairOffer = "pair.offer"
    case pairJoin = "pair.join"
    case pairConfirm = "pair.confirm"
    case pairCancel = "pair.cancel"
    case devices
    case devicesRemove = "devices.remove"
}

/// `hello`: the first request on every connection.
public struct HelloParams: Sendable, Codable, Hashable {
    /// The client's name, for logs and `status` (for example `handoffctl`).
    public var app: String
    /// The protocol versions the client speaks.
    public var versions: [Int]
    /// The activity types this client can continue (NSUserActivityTypes).
    public var handles: [String]?
    /// True: this connection also receives the pairing events of every attempt of its uid, and
    /// `pairAnswered` (docs/protocol.md, "Pairing events for other connections"); the desktop agent sets it.
    public var pairingEvents: Bool?

    public init(
        app: String, versions: [Int] = [ProtocolVersion.current], handles: [String]? = nil, pairingEvents: Bool? = nil
    ) {
        self.app = app
        self.versions = versions
        self.handles = handles
        self.pairingEvents = pairingEvents
    }
}

public struct HelloResult: Sendable, Codable, Hashable {
    /// The version chosen for this connection.
    public var version: Int
    /// The daemon's name and version, for example `handoffd 0.1.0`.
    public var daemon: String
    public init(version: Int, daemon: String) {
        self.version = version
        self.daemon = daemon
    }
}

/// `publish`: a new activity of this client, which becomes the current one.
public struct PublishParams: Sendable, Codable, Hashable {
    /// Reverse-DNS activity type, for example `org.example.browser.viewing`.
    public var type: String
    public var title: String?
    /// App data for the continuing side; at most 3 KB as compact JSON.
    public var userInfo: [String: JSONValue]?
    /// An http or https URL to open where no app handles the type.
    public var webpageURL: String?
    /// Seconds from now after which the activity is neither advertised nor served.
    public var expiresIn: Double?
    /// userInfo keys a continuation must receive, or it fails.
    public var requiredUserInfoKeys: [String]?
    /// Advertise it at once (the default), like becomeCurrent.
    public var becomeCurrent: Bool?
    /// The app takes continuation streams for it (`supportsContinuationStreams`); absent means false.
    public var supportsStreams: Bool?

    public init(
        type: String, title: String? = nil, userInfo: [String: JSONValue]? = nil, webpageURL: String? = nil,
        expiresIn: Double? = nil, requiredUserInfoKeys: [String]? = nil, becomeCurrent: Bool? = nil,
        supportsStreams: Bool? = nil
    ) {
        self.supportsStreams = supportsStreams
        self.type = type
        self.title = title
        self.userInfo = userInfo
        self.webpageURL = webpageURL
        self.expiresIn = expiresIn
        self.requiredUserInfoKeys = requiredUserInfoKeys
        self.becomeCurrent = becomeCurrent
    }
}

public struct PublishResult: Sendable, Codable, Hashable {
    /// The activity's id, for `update`, `resign` and `invalidate`.
    public var id: String
    public init(id: String) { self.id = id }
}

/// `update`: changes fields of one of this client's activities (needsSave).
/// Absent fields keep their values.
public struct UpdateParams: Sendable, Codable, Hashable {
    public var id: String
    public var title: String?
    public var userInfo: [String: JSONValue]?
    public var webpageURL: String?
    public var expiresIn: Double?
    public var requiredUserInfoKeys: [String]?
    /// Make it the current activity again.
    public var becomeCurrent: Bool?
    /// Changes whether the app takes continuation streams for it.
    public var supportsStreams: Bool?

    public init(
        id: String, title: String? = nil, userInfo: [String: JSONValue]? = nil, webpageURL: String? = nil,
        expiresIn: Double? = nil, requiredUserInfoKeys: [String]? = nil, becomeCurrent: Bool? = nil,
        supportsStreams: Bool? = nil
    ) {
        self.supportsStreams = supportsStreams
        self.id = id
        self.title = title
        self.userInfo = userInfo
        self.webpageURL = webpageURL
        self.expiresIn = expiresIn
        self.requiredUserInfoKeys = requiredUserInfoKeys
        self.becomeCurrent = becomeCurrent
    }
}

/// `resign` and `invalidate`: which activity.
public struct ActivityIDParams: Sendable, Codable, Hashable {
    public var id: String
    public init(id: String) { self.id = id }
}

/// `subscribe`: which activity types to hear about; absent means all.
public struct SubscribeParams: Sendable, Codable, Hashable {
    public var types: [String]?
    public init(types: [String]? = nil) { self.types = types }
}

/// An activity on another device of one of the caller's accounts.
public struct NearbyActivity: Sendable, Codable, Hashable {
    /// Stable while the origin device keeps its per-epoch identity; use it with `continue`.
    public var id: String
    /// The local name of the account.
    public var account: String
    /// The origin device's per-epoch identifier (hex).
    public var device: String
    /// The origin device's name, once this device knows it (docs/devices.md); absent until then.
    public var deviceName: String?
    /// The origin device's key fingerprint (16 hex digits), known with its name.
    public var deviceFingerprint: String?
    /// The activity type, when a local app declared it; nil for an unknown type.
    public var type: String?
    /// The keyed hash of the type, as carried in the beacon (hex).
    public var typeHash: String
    /// The title, once known (the beacon does not carry it).
    public var title: String?
    public var hasPayload: Bool
    public var hasWebpageURL: Bool
    public var supportsStreams: Bool
    /// Smoothed signal strength in dBm, when the adapter reports one.
    public var rssi: Double?
    public var firstSeen: Date
    public var lastSeen: Date

    public init(
        id: String, account: String, device: String, deviceName: String? = nil, deviceFingerprint: String? = nil,
        type: String?, typeHash: String, title: String? = nil,
        hasPayload: Bool, hasWebpageURL: Bool, supportsStreams: Bool, rssi: Double?, firstSeen: Date, lastSeen: Date
    ) {
        self.id = id
        self.account = account
        self.device = device
        self.deviceName = deviceName
        self.deviceFingerprint = deviceFingerprint
        self.type = type
        self.typeHash = typeHash
        self.title = title
        self.hasPayload = hasPayload
        self.hasWebpageURL = hasWebpageURL
        self.supportsStreams = supportsStreams
        self.rssi = rssi
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

public struct ListResult: Sendable, Codable, Hashable {
    public var activities: [NearbyActivity]
    public init(activities: [NearbyActivity]) { self.activities = activities }
}

/// `status`: the daemon's state as this caller may see it.
public struct StatusResult: Sendable, Codable, Hashable {
    public var daemon: String
    /// The adapter in use (`hci0`), if any.
    public var adapter: String?
    public var adapterAddress: String?
    /// What the radio is doing, in words.
    public var radio: String
    public var scanning: Bool
    public var advertising: Bool
    public var lastError: String?
    /// Names of the accounts this caller may use.
    public var accounts: [String]
    public var nearbyCount: Int
    public var clientCount: Int
    /// Activities published on this machine (all clients).
    public var localActivityCount: Int
    /// The type of the current activity, if this caller published it.
    public var currentActivityType: String?
    public var epochSeconds: UInt32
    public var beaconsRecognized: UInt64
    public var beaconsRejected: UInt64
    /// Copies of our accounts' beacons that were refused as proof that an activity
    /// is still nearby (another sender address, an older beacon, or a stale one);
    /// absent from daemons that predate it.
    public var beaconCopiesRefused: UInt64?
    /// Whether activities published here can be continued elsewhere (LE privacy);
    /// absent from daemons that predate it.
    public var continuation: ContinuationAvailability?
    /// Why the caller's own current activity is not on the air; absent when it is, or
    /// when the caller has none.
    public var notAdvertised: String?
    /// Scan reports dropped since the daemon started because it fell behind the
    /// radio; absent from daemons that predate it.
    public var scanReportsDropped: UInt64?
    /// Scan reports the daemon took since it started (recognised, rejected or
    /// repeats); absent from daemons that predate it.
    public var scanReportsHeard: UInt64?
    /// This device's name and key fingerprint (docs/devices.md); absent from daemons that predate them.
    public var deviceName: String?
    public var deviceFingerprint: String?
    /// How the radio listens: "monitor" (a passive advertisement monitor),
    /// "discovery" or "none"; absent from daemons that predate it.
    public var scanPath: String?
    /// bluetoothd's `main.conf` as the daemon reads it (`[bluetooth] bluetoothd_main_conf`), and the
    /// `[General] TemporaryTimeout` it sets (seconds; bluetoothd's 30 when unset; 0: for ever); absent
    /// when the file cannot be read, and from daemons that predate them.
    public var bluetoothdMainConf: String?
    public var bluetoothdTemporaryTimeout: Int?

    public init(
        daemon: String, adapter: String?, adapterAddress: String?, radio: String, scanning: Bool, advertising: Bool,
        lastError: String?, accounts: [String], nearbyCount: Int, clientCount: Int, localActivityCount: Int,
        currentActivityType: String?, epochSeconds: UInt32, beaconsRecognized: UInt64, beaconsRejected: UInt64,
        beaconCopiesRefused: UInt64? = nil, continuation: ContinuationAvailability? = nil, notAdvertised: String? = nil,
        scanReportsDropped: UInt64? = nil, scanReportsHeard: UInt64? = nil, deviceName: String? = nil,
        deviceFingerprint: String? = nil, scanPath: String? = nil, bluetoothdMainConf: String? = nil,
        bluetoothdTemporaryTimeout: Int? = nil
    ) {
        self.bluetoothdMainConf = bluetoothdMainConf
        self.bluetoothdTemporaryTimeout = bluetoothdTemporaryTimeout
        self.scanPath = scanPath
        self.deviceName = deviceName
        self.deviceFingerprint = deviceFingerprint
        self.notAdvertised = notAdvertised
        self.daemon = daemon
        self.adapter = adapter
        self.adapterAddress = adapterAddress
        self.radio = radio
        self.scanning = scanning
        self.advertising = advertising
        self.lastError = lastError
        self.accounts = accounts
        self.nearbyCount = nearbyCount
        self.clientCount = clientCount
        self.localActivityCount = localActivityCount
        self.currentActivityType = currentActivityType
        self.epochSeconds = epochSeconds
        self.beaconsRecognized = beaconsRecognized
        self.beaconsRejected = beaconsRejected
        self.beaconCopiesRefused = beaconCopiesRefused
        self.continuation = continuation
        self.scanReportsDropped = scanReportsDropped
        self.scanReportsHeard = scanReportsHeard
    }
}

/// `account.create` and `account.remove` and `account.export`: which account.
public struct AccountNameParams: Sendable, Codable, Hashable {
    public var name: String
    public init(name: String) { self.name = name }
}

/// `account.import`: a code from `account.export` on another device.
public struct AccountImportParams: Sendable, Codable, Hashable {
    public var code: String
    /// The local name; defaults to the name the code carries.
    public var name: String?
    public init(code: String, name: String? = nil) {
        self.code = code
        self.name = name
    }
}

/// One account, as `account.list` shows it. The key itself never leaves the daemon except through `account.export`.
public struct AccountInfo: Sendable, Codable, Hashable {
    public var name: String
    /// A short fingerprint that is the same on every device holding the key.
    public var fingerprint: String
    /// The uid allowed to use it (besides root).
    public var owner: UInt32
    public init(name: String, fingerprint: String, owner: UInt32) {
        self.name = name
        self.fingerprint = fingerprint
        self.owner = owner
    }
}

public struct AccountListResult: Sendable, Codable, Hashable {
    public var accounts: [AccountInfo]
    public init(accounts: [AccountInfo]) { self.accounts = accounts }
}

/// `account.export`: the transfer code, to type or read aloud on the other device.
public struct AccountExportResult: Sendable, Codable, Hashable {
    public var name: String
    public var code: String
    public init(name: String, code: String) {
        self.name = name
        self.code = code
    }
}

/// Events on a subscribed connection.
public enum EventName: String, Sendable, Codable, CaseIterable {
    /// A nearby activity was first seen.
    case appeared
    /// A nearby activity changed (type, flags) or was seen again with new signal strength.
    case updated
    /// A nearby activity was not seen for the expiry time, or its device stopped advertising it.
    case lost
    /// A `continue` of this connection succeeded, or one of the types it handles was continued.
    case continued
    /// A `continue` of this connection failed.
    case continueFailed
    /// Another device continued an activity this connection published.
    case wasContinued
    /// Another device opened a continuation stream to an activity this connection published.
    case streamOpened
    /// A pairing of this connection (or, with `pairingEvents`, of its uid) reached the number to compare.
    case pairNumber
    /// A pairing of this uid was answered (`pair.confirm`), by whichever connection (`pairingEvents` only).
    case pairAnswered
    /// A pairing of this connection succeeded.
    case paired
    /// A pairing of this connection ended without pairing.
    case pairFailed
}

/// The payload of `appeared`, `updated` and `lost`.
public struct NearbyEvent: Sendable, Codable, Hashable {
    public var activity: NearbyActivity
    public init(activity: NearbyActivity) { self.activity = activity }
}

/// An empty result, for requests that only succeed or fail.
public struct EmptyResult: Sendable, Codable, Hashable {
    public init() {}
}

/// Empty params, for requests that take none (`list`, `status`, `unsubscribe`, `account.list`).
public struct EmptyParams: Sendable, Codable, Hashable {
    public init() {}
}
