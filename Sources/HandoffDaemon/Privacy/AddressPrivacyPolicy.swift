import BlueZ
import BluetoothManagement
import HandoffProtocol
import Logging

/// Decides how handoffd advertises on an adapter, from what the kernel says
/// about LE privacy there, and says why (issue 7, docs/privacy.md §5.1).
///
/// The kernel's Privacy setting is the truth: only with it on does a
/// connectable advertisement go out from a resolvable private address.
/// bluetoothd's main.conf only explains the kernel's state, and stands in
/// for it only when the kernel cannot be asked. A connectable advertisement
/// never goes out while the kernel says privacy is off, whatever
/// `advertisement_type` says: it would show the adapter's public address.
public struct AddressPrivacyPolicy: Sendable {
    /// `advertisement_type` from handoffd.toml; nil is "auto".
    public var configured: LEAdvertisementData.AdvertisingType?
    /// bluetoothd's `main.conf`, or nil when it could not be read.
    public var mainConf: BluetoothdPrivacy?
    /// Where `mainConf` was read from.
    public var mainConfPath: String
    /// `address_privacy`: what to do when privacy is on but the controller
    /// has legacy advertising only (`AddressPrivacyMode`).
    public var mode: AddressPrivacyMode

    public init(
        configured: LEAdvertisementData.AdvertisingType?, mainConf: BluetoothdPrivacy?, mainConfPath: String,
        mode: AddressPrivacyMode = .strict
    ) {
        self.configured = configured
        self.mainConf = mainConf
        self.mainConfPath = mainConfPath
        self.mode = mode
    }

    /// What to do, and what to tell.
    public struct Decision: Sendable, Equatable {
        /// The advertisement type to use.
        public var type: LEAdvertisementData.AdvertisingType
        /// False: no advertisement at all (privacy on, legacy controller, strict).
        public var advertise = true
        /// For `status`.
        public var availability: ContinuationAvailability
        /// How loudly to log it.
        public var level: Logger.Level
        /// The log line: the availability's reason and fix in one sentence.
        public var message: String {
            let head = availability.isAvailable
                ? "activities published here can be continued on other devices"
                : availability.state == ContinuationAvailability.unknown
                    ? "continuation state unknown"
                    : "activities published here cannot be continued on other devices"
            return "\(head): \(availability.reason)" + (availability.fix.map { "; fix: \($0)" } ?? "")
        }
    }

    /// The decision for `adapter` (nil: none yet: nothing connectable).
    /// `extendedAdvertising`: whether its controller has LE extended
    /// advertising (`LEAdvertisingManager1.hasExtendedAdvertising`), nil when
    /// bluetoothd has not said.
    public func decide(adapter: String?, kernel: KernelPrivacy, extendedAdvertising: Bool? = nil) -> Decision {
        let decision = decide(adapter: adapter, kernel: kernel)
        guard extendedAdvertising == false, let adapter, privacyOn(kernel) else { return decision }
        return legacyController(adapter: adapter, decision)
    }

    /// True when the kernel says privacy is on, or, when it cannot be asked, main.conf turns it on.
    private func privacyOn(_ kernel: KernelPrivacy) -> Bool {
        switch kernel {
        case .known(let privacy): privacy == .on
        case .unknown: mainConf?.isPrivate == true
        }
    }

    /// Privacy on, legacy advertising: the one private address outlives epochs.
    private func legacyController(adapter: String, _ decision: Decision) -> Decision {
        let why =
            "LE privacy is on, but \(adapter) has legacy advertising only: it keeps one private address for all "
            + "its advertisements for up to 15 minutes (the kernel's rpa_timeout), across beacon epochs, so that "
            + "address would link this device's beacons of consecutive epochs"
        switch mode {
        case .strict:
            return Decision(
                type: .broadcast, advertise: false,
                availability: ContinuationAvailability(
                    state: ContinuationAvailability.unavailable,
                    addressPrivacy: decision.availability.addressPrivacy, adapter: adapter,
                    reason: "not advertising: \(why) (address_privacy = \"strict\")",
                    fix: "a Bluetooth 5 adapter with LE extended advertising; or address_privacy = \"warn\" in "
                        + "handoffd.toml to advertise anyway; or Privacy = off in \(mainConfPath) for unlinkable "
                        + "beacons that cannot be continued"),
                level: .error)
        case .warn:
            var warned = decision
            warned.availability.reason += "; but \(why) (address_privacy = \"warn\")"
            warned.level = .warning
            return warned
        }
    }

    private func decide(adapter: String?, kernel: KernelPrivacy) -> Decision {
        guard let adapter else {
            return Decision(
                type: .broadcast,
                availability: ContinuationAvailability(
                    state: ContinuationAvailability.unknown, addressPrivacy: "unknown", adapter: nil,
                    reason: "no Bluetooth adapter yet"),
                level: .debug)
        }
        switch kernel {
        case .known(let privacy): return decide(adapter: adapter, privacy: privacy)
        case .unknown(let why): return decideFromMainConf(adapter: adapter, why: why)
        }
    }

    private func decide(adapter: String, privacy: ControllerInformation.Privacy) -> Decision {
        if privacy == .on {
            if configured == .broadcast { return configuredBroadcast(adapter: adapter, privacy: "on") }
            var reason = "LE privacy on, \(adapter)"
            if mainConf?.isPrivate != true {
                reason += " (set by an earlier bluetoothd: \(mainConfSetting); put Privacy = device in [General] there to keep it on)"
            }
            return Decision(
                type: .peripheral, availability: available(adapter: adapter, privacy: "on", reason: reason),
                level: .info)
        }
        if configured == .broadcast { return configuredBroadcast(adapter: adapter, privacy: privacy.rawValue) }
        let (why, fix) = privacyOffExplanation(adapter: adapter, privacy: privacy)
        return refusal(adapter: adapter, privacy: privacy.rawValue, why: why, fix: fix)
    }

    private func decideFromMainConf(adapter: String, why: String) -> Decision {
        if configured == .broadcast { return configuredBroadcast(adapter: adapter, privacy: "unknown") }
        guard mainConf?.isPrivate == true else {
            return refusal(
                adapter: adapter, privacy: "unknown",
                why: "the kernel cannot be asked about LE privacy (\(why)), and \(mainConfPath) does not turn it on (\(mainConfSetting))",
                fix: setPrivacyFix)
        }
        return Decision(
            type: .peripheral,
            availability: available(
                adapter: adapter, privacy: "unknown",
                reason: "LE privacy unverified on \(adapter): the kernel cannot be asked (\(why)); relying on \(mainConfPath) (\(mainConfSetting))"),
            level: .warning)
    }

    /// Why privacy is off or impossible, and the fix.
    private func privacyOffExplanation(adapter: String, privacy: ControllerInformation.Privacy) -> (String, String?) {
        if privacy == .unsupported {
            return ("\(adapter) cannot do LE privacy (the kernel does not list it among its supported settings)",
                "use a Bluetooth LE adapter that supports privacy")
        }
        if mainConf?.isPrivate == true {
            return (
                "LE privacy is off on \(adapter) although \(mainConfPath) asks for it (\(mainConfSetting)): "
                    + "bluetoothd's Set Privacy was refused (Rejected) because \(adapter) was powered when bluetoothd started",
                "power the adapter off (bluetoothctl power off), then sudo systemctl restart bluetooth")
        }
        return ("LE privacy is off on \(adapter) (\(mainConfPath): \(mainConfSetting))", setPrivacyFix)
    }

    private var setPrivacyFix: String {
        "set Privacy = device in [General] of \(mainConfPath) (sudo make install does), then sudo systemctl restart bluetooth"
    }

    /// Broadcast instead of a connectable advertisement that would show the public address.
    private func refusal(adapter: String, privacy: String, why: String, fix: String?) -> Decision {
        let refused = configured == .peripheral
        let reason =
            refused
            ? "advertisement_type = \"peripheral\" refused, advertising as broadcast: \(why), and a connectable advertisement would show the adapter's public address"
            : "\(why); a connectable advertisement would show the adapter's public address, so the beacon is broadcast only"
        return Decision(
            type: .broadcast,
            availability: ContinuationAvailability(
                state: ContinuationAvailability.unavailable, addressPrivacy: privacy, adapter: adapter, reason: reason,
                fix: fix),
            level: .error)
    }

    private func configuredBroadcast(adapter: String, privacy: String) -> Decision {
        Decision(
            type: .broadcast,
            availability: ContinuationAvailability(
                state: ContinuationAvailability.unavailable, addressPrivacy: privacy, adapter: adapter,
                reason: "advertisement_type = \"broadcast\" in handoffd.toml (LE privacy \(privacy), \(adapter))",
                fix: privacy == "on"
                    ? "set advertisement_type = \"auto\" in handoffd.toml"
                    : "set advertisement_type = \"auto\" in handoffd.toml and turn LE privacy on: \(setPrivacyFix)"),
            level: .notice)
    }

    private func available(adapter: String, privacy: String, reason: String) -> ContinuationAvailability {
        ContinuationAvailability(
            state: ContinuationAvailability.available, addressPrivacy: privacy, adapter: adapter, reason: reason)
    }

    /// `Privacy = device`, `no Privacy set` or `unreadable`.
    private var mainConfSetting: String {
        guard let mainConf else { return "unreadable" }
        return mainConf.value.map { "Privacy = \($0)" } ?? "no Privacy set"
    }
}
