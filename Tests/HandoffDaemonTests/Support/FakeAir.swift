import BlueZ
import Foundation
import DBus
import Synchronization

/// A shared air for fake radios: what one advertises, the others hear, as
/// bluetoothd would report it (one Device1 path per sender).
final class FakeAir: Sendable {
    private let radios = Mutex<[FakeRadio]>([])

    func join(_ radio: FakeRadio) { radios.withLock { $0.append(radio) } }

    /// Delivers `payload` from `sender` to every other radio on the air.
    func carry(_ payload: [UInt8], from sender: DBusObjectPath) {
        for radio in radios.withLock({ $0 }) where radio.device != sender {
            radio.hear(payload, from: sender)
        }
    }
}

/// A `Radio` with no bluetoothd behind it: it records what the daemon asks
/// for, and delivers scan reports that a test (or the `FakeAir`) feeds it.
actor FakeRadio: Radio {
    /// The Device1 path other radios see our advertisements come from.
    nonisolated let device: DBusObjectPath
    nonisolated let scanEvents: ScanEvents
    nonisolated var bluez: BlueZContext? { nil }
    private nonisolated let feed: ScanEventFeed
    private let air: FakeAir?
    /// Every `advertise` call, in order: its lowest slot's advertisement (nil: none).
    private(set) var history: [RadioAdvertisement?] = []
    /// Every `advertise` call, in order: all its slots.
    private(set) var slotHistory: [[RadioAdvertisement]] = []
    /// How many advertising instances the fake adapter has; slots beyond are refused.
    var instances = 5
    private(set) var pauses = 0
    private(set) var resumes = 0
    private var phase: RadioStatus.Phase = .ready("hci0")

    init(name: String, air: FakeAir? = nil) {
        device = try! DBusObjectPath("/org/bluez/hci0/dev_\(name)")
        (scanEvents, feed) = ScanEvents.makeStream()
        self.air = air
        air?.join(self)
    }

    /// What is on the air now (the lowest slot).
    var onAir: RadioAdvertisement? { history.last ?? nil }
    /// Everything on the air now, by ascending slot (within the instances).
    var onAirSlots: [RadioAdvertisement] { Array((slotHistory.last ?? []).prefix(instances)) }

    var status: RadioStatus {
        let wanted = slotHistory.last ?? []
        var errors: [Int: String] = [:]
        for advertisement in wanted.dropFirst(instances) {
            errors[advertisement.slot] = "bluetoothd refused the advertisement: no free advertising instance (fake)"
        }
        return RadioStatus(
            phase: phase, adapter: "hci0", adapterAddress: "00:00:00:00:00:00", scanning: true,
            advertising: !onAirSlots.isEmpty, advertisingSlots: Set(onAirSlots.map(\.slot)), slotErrors: errors)
    }

    func advertise(_ advertisements: [RadioAdvertisement]) async {
        let sorted = advertisements.sorted { $0.slot < $1.slot }
        history.append(sorted.first)
        slotHistory.append(sorted)
        for advertisement in sorted.prefix(instances) { air?.carry(advertisement.payload, from: device) }
    }

    func setInstances(_ count: Int) { instances = count }

    func pauseDiscovery() async { pauses += 1 }
    func resumeDiscovery() async { resumes += 1 }
    func run() async {}
    func shutDown() async { feed.finish() }

    /// A report of `payload` (Manufacturer Specific Data of 0xFFFF) from `sender`,
    /// whose address is `address` (by default one per sender path, as bluetoothd
    /// names a Device1 after its address).
    nonisolated func hear(_ payload: [UInt8], from sender: DBusObjectPath, address: String? = nil) {
        feed.yield(
            .report(
                AdvertisementReport(
                    adapter: "/org/bluez/hci0", device: sender, address: address ?? Self.address(of: sender),
                    addressType: "random",
                    rssi: -60, companyID: 0xFFFF, data: payload, receivedAt: .now)))
    }

    /// A made-up address for a Device1 path: the same path, the same address.
    nonisolated static func address(of sender: DBusObjectPath) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sender.rawValue.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return (0..<6).map { String(format: "%02X", UInt8(truncatingIfNeeded: hash >> ($0 * 8))) }.joined(separator: ":")
    }
}
