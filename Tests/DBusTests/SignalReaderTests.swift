import DBus
import DBusTestSupport
import Synchronization
import Testing

/// `addSignalHandler(matching:reader:)`: signals read in place, on the
/// connection's thread, with the same rules as decoded ones.
@Suite(.timeLimit(.minutes(1))) struct SignalReaderTests {
    static let events = "org.handoff.Test.Events"

    /// What a reader handler saw of one signal.
    struct Seen: Sendable, Equatable {
        var isData = false
        var signature = false
        var path: DBusObjectPath?
        var sender: String?
        var interned = false
        var walked: [String] = []
        var decoded: [DBusValue] = []
    }

    @Test func readsTheBodyInPlaceAsTheDecoderDoes() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let receiver = try await t.connect()
            let (seen, sink) = AsyncStream<Seen>.makeStream()
            let handler = try await receiver.addSignalHandler(
                matching: DBusMatchRule(interface: Self.events),
                reader: { reader in
                    var s = Seen()
                    s.isData = reader.isSignal(interface: Self.events, member: "Data")
                    s.signature = reader.hasSignature("sa{sv}as")
                    s.path = reader.path
                    s.sender = reader.sender
                    let known = "org.bluez.Device1"
                    if let first = reader.readString(preferring: known) {
                        s.walked.append(first)
                        s.interned = first == known
                    }
                    reader.next()
                    if reader.typeCode == UInt8(ascii: "a"), reader.elementTypeCode == UInt8(ascii: "e"), reader.enter() {
                        while reader.typeCode == UInt8(ascii: "e") {
                            reader.enter()
                            let key = reader.readString() ?? "?"
                            reader.next()
                            let value = (try? reader.readValue()).map { "\($0)" } ?? "undecodable"
                            s.walked.append("\(key)=\(value)")
                            reader.leave()
                            reader.next()
                        }
                        reader.leave()
                    }
                    s.decoded = (try? reader.decodeMessage().body) ?? []
                    sink.yield(s)
                })
            let body: [DBusValue] = [
                .string("org.bluez.Device1"),
                .vardict([
                    "RSSI": .int16(-60),
                    "ManufacturerData": .dictionary(
                        key: .uint16, value: .variant, [(.uint16(0xFFFF), .variant(.bytes([1, 2, 3])))]),
                ]),
                .strings(["TxPower"]),
            ]
            try emitter.emitSignal(path: "/e", interface: Self.events, member: "Data", body)
            var iterator = seen.makeAsyncIterator()
            let s = try #require(await iterator.next())
            #expect(s.isData && s.signature && s.path == "/e" && s.sender == emitter.uniqueName && s.interned)
            #expect(s.decoded == body)
            // Keys in the order sent (vardict sorts them), values as a full decoding gives them.
            let expected = [
                "org.bluez.Device1",
                "ManufacturerData=\(DBusValue.variant(body[1].vardict!["ManufacturerData"]!))",
                "RSSI=\(DBusValue.variant(.int16(-60)))",
            ]
            #expect(s.walked == expected)
            handler.cancel()
        }
    }

    @Test func argumentRulesStillMatchOnArguments() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let receiver = try await t.connect()
            let (seen, sink) = AsyncStream<String>.makeStream()
            let handler = try await receiver.addSignalHandler(
                matching: DBusMatchRule(interface: Self.events, arguments: [0: "wanted"]),
                reader: { reader in sink.yield(reader.readString() ?? "?") })
            // The bus routes by the rule; the connection checks it again locally,
            // so a signal the bus sends for another reason must not get through.
            let other = try await receiver.signals(matching: DBusMatchRule(interface: Self.events))
            try emitter.emitSignal(path: "/e", interface: Self.events, member: "Data", [.string("unwanted")])
            try emitter.emitSignal(path: "/e", interface: Self.events, member: "Data", [.string("wanted")])
            var iterator = seen.makeAsyncIterator()
            #expect(await iterator.next() == "wanted")
            var others = other.makeAsyncIterator()
            #expect(try await others.next()?.body == [.string("unwanted")])
            handler.cancel()
        }
    }

    @Test func scheduledJobsRunAfterTheirDelay() async throws {
        try await TestBus.run { t in
            let connection = try await t.connect()
            let (ran, sink) = AsyncStream<ContinuousClock.Instant>.makeStream()
            let start = ContinuousClock.now
            #expect(connection.schedule(after: .milliseconds(80)) { sink.yield(.now) })
            #expect(connection.schedule(after: .milliseconds(20)) { sink.yield(.now) })
            var iterator = ran.makeAsyncIterator()
            let first = try #require(await iterator.next())
            let second = try #require(await iterator.next())
            #expect(first - start >= .milliseconds(20) && second - start >= .milliseconds(80) && first <= second)
            await connection.close()
            #expect(!connection.schedule(after: .zero) {})
        }
    }
}
