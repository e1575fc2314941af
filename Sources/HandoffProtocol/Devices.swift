#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `devices`: one device of an account (docs/devices.md).
public struct DeviceInfo: Sendable, Codable, Hashable {
    /// The local name of the account.
    public var account: String
    /// The device's name, as its owner set it.
    public var name: String
    /// The device's key fingerprint: 16 hex digits, lasting across renames.
    public var fingerprint: String
    /// Whether this is the device handoffd runs on.
    public var thisDevice: Bool
    /// Whether an activity of the device is nearby now.
    public var nearby: Bool
    /// When this device learned the other's name (absent for this device).
    public var introduced: Date?
    /// When one of its beacons was last heard (absent for this device and when never heard).
    public var lastHeard: Date?
    /// True while a new account key (after `devices.remove`, docs/devices.md section 7) waits to be
    /// delivered to this device; absent otherwise.
    public var newKeyPending: Bool?

    public init(
        account: String, name: String, fingerprint: String, thisDevice: Bool, nearby: Bool, introduced: Date?,
        lastHeard: Date?, newKeyPending: Bool? = nil
    ) {
        self.account = account
        self.name = name
        self.fingerprint = fingerprint
        self.thisDevice = thisDevice
        self.nearby = nearby
        self.introduced = introduced
        self.lastHeard = lastHeard
        self.newKeyPending = newKeyPending
    }
}

/// `devices.remove`: the device to lock out of an account (docs/devices.md, section 7).
public struct DevicesRemoveParams: Sendable, Codable, Hashable {
    /// The device's name or key fingerprint, as `devices` shows it.
    public var device: String
    /// The account; needed only when the caller may use several that know the device.
    public var account: String?

    public init(device: String, account: String? = nil) {
        self.device = device
        self.account = account
    }
}

/// A device named in a `devices.remove` result.
public struct RemovedDevice: Sendable, Codable, Hashable {
    public var name: String
    public var fingerprint: String

    public init(name: String, fingerprint: String) {
        self.name = name
        self.fingerprint = fingerprint
    }
}

/// `devices.remove`: what happened. The account now has a new key here; each device in
/// `pending` receives it the next time this device hears it nearby (within 14 days, `until`).
public struct DevicesRemoveResult: Sendable, Codable, Hashable {
    public var account: String
    /// The account's new fingerprint (its identifier under the new key).
    public var fingerprint: String
    public var removed: RemovedDevice
    public var pending: [RemovedDevice]
    /// When pending deliveries are given up.
    public var until: Date

    public init(account: String, fingerprint: String, removed: RemovedDevice, pending: [RemovedDevice], until: Date) {
        self.account = account
        self.fingerprint = fingerprint
        self.removed = removed
        self.pending = pending
        self.until = until
    }
}

/// `devices`: for each account the caller may use, this device first, then the others it knows.
public struct DevicesResult: Sendable, Codable, Hashable {
    public var devices: [DeviceInfo]
    public init(devices: [DeviceInfo]) { self.devices = devices }
}
