import BlueZ
import BluetoothManagement
import Glibc
import HandoffProtocol
import Testing

@testable import HandoffDaemon

/// The rules of issue 7: the kernel's privacy bit decides, main.conf explains.
@Suite struct AddressPrivacyPolicyTests {
    static func policy(_ configured: LEAdvertisementData.AdvertisingType?, _ privacy: String?) -> AddressPrivacyPolicy {
        let mainConf = privacy.map { $0 == "<unreadable>" ? nil : BluetoothdPrivacy(value: $0) } ?? BluetoothdPrivacy(value: nil)
        return AddressPrivacyPolicy(configured: configured, mainConf: mainConf, mainConfPath: "/etc/bluetooth/main.conf")
    }

    @Test func kernelOnMakesItConnectable() {
        let decision = Self.policy(nil, "device").decide(adapter: "hci0", kernel: .known(.on))
        #expect(decision.type == .peripheral)
        #expect(decision.availability == ContinuationAvailability(
            state: "available", addressPrivacy: "on", adapter: "hci0", reason: "LE privacy on, hci0"))
        #expect(decision.level == .info)
        #expect(decision.message == "activities published here can be continued on other devices: LE privacy on, hci0")
    }

    /// Privacy on and legacy advertising: one private address for 15 minutes, across epochs.
    @Test func legacyControllerWithPrivacyStaysOffTheAirWhenStrict() {
        var policy = Self.policy(nil, "device")
        let strict = policy.decide(adapter: "hci0", kernel: .known(.on), extendedAdvertising: false)
        #expect(!strict.advertise && strict.level == .error && !strict.availability.isAvailable)
        #expect(strict.availability.reason.contains("hci0 has legacy advertising only"))
        // main.conf standing in for the kernel: the same.
        #expect(!policy.decide(adapter: "hci0", kernel: .unknown("no Bluetooth"), extendedAdvertising: false).advertise)
        // A configured broadcast shares the private address too.
        #expect(!Self.policy(.broadcast, "device").decide(adapter: "hci0", kernel: .known(.on), extendedAdvertising: false).advertise)

        policy.mode = .warn
        let warned = policy.decide(adapter: "hci0", kernel: .known(.on), extendedAdvertising: false)
        #expect(warned.advertise && warned.type == .peripheral && warned.level == .warning)
        #expect(warned.availability.isAvailable && warned.availability.reason.contains("address_privacy = \"warn\""))
    }

    @Test func legacyRuleNeedsPrivacyOnAndALegacyController() {
        let policy = Self.policy(nil, "device")
        // Extended advertising, or not known yet: as before.
        #expect(policy.decide(adapter: "hci0", kernel: .known(.on), extendedAdvertising: true)
            == policy.decide(adapter: "hci0", kernel: .known(.on)))
        #expect(policy.decide(adapter: "hci0", kernel: .known(.on), extendedAdvertising: nil).advertise)
        // Privacy off: broadcast from fresh non-resolvable addresses is unlinkable: on the air.
        let off = Self.policy(nil, nil).decide(adapter: "hci0", kernel: .known(.off), extendedAdvertising: false)
        #expect(off.advertise && off.type == .broadcast)
    }

    @Test func kernelOnWithoutMainConfSaysItWillNotLast() {
        let decision = Self.policy(.peripheral, "off").decide(adapter: "hci1", kernel: .known(.on))
        #expect(decision.type == .peripheral && decision.availability.isAvailable)
        #expect(decision.availability.reason.contains("set by an earlier bluetoothd: Privacy = off"))
    }

    @Test func peripheralWithKernelOffIsRefused() {
        let decision = Self.policy(.peripheral, nil).decide(adapter: "hci0", kernel: .known(.off))
        #expect(decision.type == .broadcast)
        #expect(decision.level == .error)
        #expect(decision.availability.state == "unavailable" && decision.availability.addressPrivacy == "off")
        #expect(decision.availability.reason.hasPrefix(
            "advertisement_type = \"peripheral\" refused, advertising as broadcast: LE privacy is off on hci0 (/etc/bluetooth/main.conf: no Privacy set)"))
        #expect(decision.availability.reason.hasSuffix("would show the adapter's public address"))
        #expect(decision.availability.fix
            == "set Privacy = device in [General] of /etc/bluetooth/main.conf (sudo make install does), then sudo systemctl restart bluetooth")
    }

    @Test func mainConfPrivateButKernelOffIsTheRejectedStartUp() {
        let decision = Self.policy(nil, "device").decide(adapter: "hci0", kernel: .known(.off))
        #expect(decision.type == .broadcast && decision.level == .error)
        #expect(decision.availability.reason.contains("bluetoothd's Set Privacy was refused (Rejected) because hci0 was powered when bluetoothd started"))
        #expect(decision.availability.fix == "power the adapter off (bluetoothctl power off), then sudo systemctl restart bluetooth")
    }

    @Test func aControllerWithoutPrivacyCannotContinue() {
        let decision = Self.policy(nil, "device").decide(adapter: "hci0", kernel: .known(.unsupported))
        #expect(decision.type == .broadcast && decision.availability.addressPrivacy == "unsupported")
        #expect(decision.availability.reason.hasPrefix("hci0 cannot do LE privacy"))
    }

    @Test func unknownKernelFallsBackToMainConfAndSaysSo() {
        let why = "this kernel has no Bluetooth support: socket(AF_BLUETOOTH) fails with EAFNOSUPPORT"
        let trusted = Self.policy(nil, "network").decide(adapter: "hci0", kernel: .unknown(why))
        #expect(trusted.type == .peripheral && trusted.level == .warning)
        #expect(trusted.availability == ContinuationAvailability(
            state: "available", addressPrivacy: "unknown", adapter: "hci0",
            reason: "LE privacy unverified on hci0: the kernel cannot be asked (\(why)); relying on /etc/bluetooth/main.conf (Privacy = network)"))
        for value in ["off", "limited-device", "Device", "true", "<unreadable>"] {
            let refused = Self.policy(.peripheral, value).decide(adapter: "hci0", kernel: .unknown(why))
            #expect(refused.type == .broadcast && refused.level == .error, "\(value)")
            #expect(refused.availability.reason.contains("the kernel cannot be asked about LE privacy (\(why))"))
        }
        let unreadable = Self.policy(nil, "<unreadable>").decide(adapter: "hci0", kernel: .unknown(why))
        #expect(unreadable.availability.reason.contains("(unreadable)"))
    }

    @Test func configuredBroadcastIsKeptAndExplained() {
        let decision = Self.policy(.broadcast, "device").decide(adapter: "hci0", kernel: .known(.on))
        #expect(decision.type == .broadcast && decision.level == .notice)
        #expect(decision.availability.reason == "advertisement_type = \"broadcast\" in handoffd.toml (LE privacy on, hci0)")
        #expect(decision.availability.fix == "set advertisement_type = \"auto\" in handoffd.toml")
        let off = Self.policy(.broadcast, nil).decide(adapter: "hci0", kernel: .known(.off))
        #expect(off.availability.fix?.contains("turn LE privacy on: set Privacy = device") == true)
    }

    @Test func noAdapterIsUnknownAndNotConnectable() {
        let decision = Self.policy(.peripheral, "device").decide(adapter: nil, kernel: .known(.on))
        #expect(decision.type == .broadcast && decision.availability.state == "unknown")
    }

    /// Whatever the configuration and main.conf say, a kernel that says privacy is
    /// off (or impossible) never gets a connectable advertisement.
    @Test func neverConnectableWithoutKernelPrivacy() {
        let types: [LEAdvertisementData.AdvertisingType?] = [nil, .peripheral, .broadcast]
        let values: [String?] = [nil, "device", "network", "on", "off", "limited-device", "<unreadable>"]
        for type in types {
            for value in values {
                for privacy in [ControllerInformation.Privacy.off, .unsupported] {
                    let decision = Self.policy(type, value).decide(adapter: "hci0", kernel: .known(privacy))
                    #expect(decision.type == .broadcast && !decision.availability.isAvailable, "\(String(describing: type)) \(String(describing: value)) \(privacy)")
                }
            }
        }
    }

    /// The real kernel query, on this host: without Bluetooth in the kernel it says so.
    @Test func theKernelIsAskedHonestly() async {
        #expect(await KernelPrivacy.read(interfaceName: "eth0") == .unknown("eth0 is not a kernel controller name (hciN)"))
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
        let noBluetooth = probe < 0 && errno == EAFNOSUPPORT
        if probe >= 0 { close(probe) }
        let answer = await KernelPrivacy.read(interfaceName: "hci32000")
        if noBluetooth {
            #expect(answer == .unknown("this kernel has no Bluetooth support: socket(AF_BLUETOOTH) fails with EAFNOSUPPORT"))
        } else {
            #expect(answer == .unknown("the kernel has no controller hci32000"))
        }
    }
}
