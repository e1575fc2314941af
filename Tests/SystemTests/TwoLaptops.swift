import DBusTestSupport
import Foundation
import HandoffProtocol

/// Two laptops on one simulated air: a private bus, the simulated BlueZ with
/// adapters hci0…hciN, and a handoffd per laptop sharing one account.
struct TwoLaptops {
    static let type = "org.handoff.test.viewing"

    let bus: PrivateBus
    let sim: SimulatedBlueZ
    let a: DaemonProcess
    let b: DaemonProcess

    /// - Parameter expirySeconds: the nearby expiry; the origin renews its beacon (a new
    ///   address on the simulator) every third of it.
    /// - Parameter rescanInterval: how often, in seconds, a scanning adapter hears
    ///   unchanged advertisements again.
    /// - Parameter originBluetoothSettings: more `[bluetooth]` settings for A.
    /// - Parameter originSections: more configuration sections for A (`continuingSections`: for B).
    init(
        adapters: Int = 2, epochSeconds: Int = 600, expirySeconds: Int = 3, rescanInterval: Int = 1,
        extraSocketSettings: String = "",
        originBluetoothSettings: String = "", simulatorArguments: [String] = [], originSections: String = "",
        continuingSections: String = ""
    ) async throws {
        bus = try PrivateBus()
        sim = try await SimulatedBlueZ(
            bus: bus,
            arguments: [
                "--adapters", "\(adapters)", "--rescan-interval", "\(rescanInterval)", "--temporary-timeout", "5",
                // Laptops of today: with LE privacy on (DaemonProcess's main.conf), a
                // legacy-only controller would keep handoffd off the air (address_privacy).
                "--extended-advertising",
            ] + simulatorArguments)
        a = try await DaemonProcess(
            bus: bus, name: "a", adapter: "hci0", epochSeconds: epochSeconds, expirySeconds: expirySeconds,
            extraSocketSettings: extraSocketSettings,
            extraBluetoothSettings: originBluetoothSettings, extraSections: originSections)
        b = try await DaemonProcess(
            bus: bus, name: "b", adapter: "hci1", epochSeconds: epochSeconds, expirySeconds: expirySeconds,
            extraSocketSettings: extraSocketSettings, extraSections: continuingSections)
        try await Self.share(account: "me", from: a, to: b)
    }

    /// Creates an account on `from` and imports its export code on `to`.
    static func share(account: String, from: DaemonProcess, to: DaemonProcess) async throws {
        let owner = try await from.client()
        _ = try await owner.call(.accountCreate, AccountNameParams(name: account), as: AccountInfo.self)
        let export = try await owner.call(.accountExport, AccountNameParams(name: account), as: AccountExportResult.self)
        let other = try await to.client()
        _ = try await other.call(.accountImport, AccountImportParams(code: export.code, name: account), as: AccountInfo.self)
    }

    func stop() async {
        _ = await a.terminate()
        _ = await b.terminate()
        await sim.stop()
        bus.stop()
    }
}
