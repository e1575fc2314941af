import BlueZ
import DBusTestSupport
import Foundation
import HandoffCore
import HandoffKit
import HandoffProtocol
import Testing

/// B's side against an origin that misbehaves (`FakeOrigin`): the continuation fails,
/// whole (no `continued`), with the failure's code (docs/protocol.md, "Continuation failures").
@Suite(.serialized) struct ContinueCheckSystemTests {
    static func expected(_ behaviour: FakeOrigin.Behaviour) -> (code: ContinueError.Code, message: String) {
        switch behaviour {
        case .tampered: (.payloadInvalid, "failed authentication")
        case .wrongType: (.payloadInvalid, "not the one its beacon announced")
        case .missingRequiredKey: (.payloadInvalid, "lacks required keys: tab")
        case .refuses: (.rejected, "no longer current")
        case .silent: (.timeout, "did not answer within 2 s")
        case .offersAStreamItNeverOpens: (.timeout, "")
        }
    }

    @Test(arguments: FakeOrigin.Behaviour.allCases.filter { $0 != .offersAStreamItNeverOpens })
    func aMisbehavingOriginFailsTheContinuation(behaviour: FakeOrigin.Behaviour) async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--rescan-interval", "1", "--extended-advertising"])
        let b = try await DaemonProcess(bus: bus, name: "b", adapter: "hci1")
        let owner = try await b.client()
        _ = try await owner.call(.accountCreate, AccountNameParams(name: "me"), as: AccountInfo.self)
        let export = try await owner.call(.accountExport, AccountNameParams(name: "me"), as: AccountExportResult.self)
        let key = try AccountKeyCode.decode(export.code, name: "me")
        let origin = try await FakeOrigin(
            bus: bus, adapter: "/org/bluez/hci0", account: key, epochSeconds: 600, behaviour: behaviour)
        let reader = HandoffClient(
            configuration: .init(app: "org.handoff.test.reader", handles: [FakeOrigin.type], socketPath: b.socket))
        try await eventually { try await reader.list().count == 1 }
        let nearby = try await reader.list()[0]
        #expect(nearby.type == FakeOrigin.type)

        let error = await #expect(throws: ContinueError.self) {
            _ = try await reader.continue(nearby, timeout: .seconds(2))
        }
        let (code, message) = Self.expected(behaviour)
        #expect(error?.code == code, "\(String(describing: error))")
        #expect(error.map { "\($0)".contains(message) } == true, "\(String(describing: error))")
        // handoffd keeps serving.
        #expect(try await reader.list().count == 1)

        await reader.close()
        await origin.stop()
        _ = await b.terminate()
        await sim.stop()
        bus.stop()
    }
}
