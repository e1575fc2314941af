import DBus
import DBusTestSupport
import Foundation
import HandoffProtocol
import Testing

/// The LE link under a continuation stream (docs/continuation.md, section 10): after a continuation's
/// exchange the continuing daemon takes its link to the origin down once it has lingered, but the stream's
/// channel rides on that link, so it stays up for as long as the stream is open, and goes after.
@Suite(.serialized) struct StreamLinkSystemTests {
    /// How many of `adapter`'s devices bluetoothd (the simulator) says are connected.
    static func connectedDevices(_ laptops: TwoLaptops, adapter: String) async throws -> Int {
        let reply = try await laptops.sim.control.call(
            destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects")
        guard case .array(_, let objects)? = reply.body.first else { throw TestFailure("GetManagedObjects: \(reply.body)") }
        var connected = 0
        for case .dictEntry(.objectPath(let path), .array(_, let interfaces)) in objects
        where path.rawValue.hasPrefix("/org/bluez/\(adapter)/dev_") {
            for case .dictEntry(.string("org.bluez.Device1"), .array(_, let properties)) in interfaces {
                for case .dictEntry(.string("Connected"), .variant(.boolean(true))) in properties { connected += 1 }
            }
        }
        return connected
    }

    @Test func theLinkStaysUpWhileAStreamIsOpenAndGoesAfter() async throws {
        let laptops = try await StreamSystemTests.laptops()
        defer { Task { await laptops.stop() } }
        let (origin, continuing, nearbyID) = try await StreamSystemTests.publish(laptops)
        let ends = try await StreamSystemTests.open(origin, continuing, nearbyID)
        let atOpen = try await Self.connectedDevices(laptops, adapter: "hci1")
        #expect(atOpen == 1)
        // Longer than the link lingers after an exchange (`GattContinuationLink.lingerDelay`, 5 s).
        try await Task.sleep(for: .seconds(7))
        #expect(
            try await Self.connectedDevices(laptops, adapter: "hci1") == 1,
            "the link went down under the open stream; A's log:\n\(laptops.a.log.suffix(2500))\nB's log:\n\(laptops.b.log.suffix(1500))")
        async let up = ends.continuing.write([1, 2, 3])
        async let down = ends.origin.write([4, 5])
        #expect(await ends.origin.readAll().bytes == [1, 2, 3])
        #expect(await ends.continuing.readAll().bytes == [4, 5])
        let wrote = await (up, down)
        #expect(wrote.0 && wrote.1)
        // The stream ended: the link goes, after lingering.
        try await eventually(within: .seconds(15)) { try await Self.connectedDevices(laptops, adapter: "hci1") == 0 }
        withExtendedLifetime((origin, continuing)) {}
    }
}
