import DBus
import DBusTestSupport
import Foundation
import Testing

/// `dbus-send`, the reference implementation's command-line client, as a second
/// independent peer: it calls our object (its own argument syntax, its own
/// printing of our reply), and its signals reach our subscriptions.
@Suite(.timeLimit(.minutes(1))) struct DBusSendTests {
    static let dbusSend = "/usr/bin/dbus-send"

    /// Runs dbus-send on the test bus and returns what it printed.
    static func dbusSend(_ t: TestBus, _ arguments: [String]) async throws -> (status: Int32?, output: String) {
        let process = try t.start(Self.dbusSend, ["--session"] + arguments)
        let status = await process.process.exitCode(within: .seconds(30))
        return (status, process.log)
    }

    @Test func dbusSendCallsOurObject() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let received = Recorder<[DBusValue]>([])
            _ = try await server.export(
                "/target",
                interfaces: [
                    DBusInterface(
                        localInterface,
                        methods: [
                            DBusMethod("Take", inputs: "ybnqiuxtdsoasa{si}v", outputs: "sa{si}v") { call in
                                received.set(call.body)
                                return [call.body[9], call.body[12], call.body[13]]
                            }
                        ],
                        properties: [DBusProperty("Count", UInt32(7))])
                ])
            let (status, output) = try await Self.dbusSend(t, [
                "--print-reply", "--dest=\(server.uniqueName)", "/target", "\(localInterface).Take",
                "byte:255", "boolean:true", "int16:-32768", "uint16:65535", "int32:-7", "uint32:4294967295",
                "int64:-9223372036854775808", "uint64:18446744073709551615", "double:-1.5", "string:grüße ✓",
                "objpath:/a/b_c", "array:string:x,y", "dict:string:int32:one,1,two,2", "variant:int32:42",
            ])
            #expect(status == 0, "dbus-send said:\n\(output)")
            #expect(received.value == [
                .byte(255), .boolean(true), .int16(-32768), .uint16(65535), .int32(-7), .uint32(.max), .int64(.min),
                .uint64(.max), .double(-1.5), .string("grüße ✓"), .objectPath("/a/b_c"), .strings(["x", "y"]),
                .dictionary(key: .string, value: .int32, [(.string("one"), .int32(1)), (.string("two"), .int32(2))]),
                .variant(.int32(42)),
            ])
            // dbus-send prints our reply in its own notation.
            let reply = output.split(separator: "\n").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            #expect(reply == [
                "string \"grüße ✓\"", "array [", "dict entry(", "string \"one\"", "int32 1", ")", "dict entry(",
                "string \"two\"", "int32 2", ")", "]", "variant       int32 42",
            ], "dbus-send said:\n\(output)")

            let (getStatus, getOutput) = try await Self.dbusSend(t, [
                "--print-reply", "--dest=\(server.uniqueName)", "/target", "org.freedesktop.DBus.Properties.Get",
                "string:\(localInterface)", "string:Count",
            ])
            #expect(getStatus == 0)
            #expect(getOutput.contains("variant       uint32 7"), "dbus-send said:\n\(getOutput)")

            // A wrong argument signature: our InvalidArgs, as dbus-send reports it.
            let (wrongStatus, wrongOutput) = try await Self.dbusSend(t, [
                "--print-reply", "--dest=\(server.uniqueName)", "/target", "\(localInterface).Take", "string:x",
            ])
            #expect(wrongStatus != 0)
            #expect(wrongOutput.contains("Error org.freedesktop.DBus.Error.InvalidArgs"), "dbus-send said:\n\(wrongOutput)")
        }
    }

    @Test func dbusSendSignalsReachOurSubscription() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let signals = try await receiver.signals(matching: DBusMatchRule(interface: "org.handoff.Test.Events", member: "Sent"))
            var iterator = signals.makeAsyncIterator()
            let (status, output) = try await Self.dbusSend(t, [
                "--type=signal", "/sender", "org.handoff.Test.Events.Sent", "string:hello", "array:byte:1,2,3",
                "dict:uint16:string:76,seventy-six", "variant:boolean:true",
            ])
            #expect(status == 0, "dbus-send said:\n\(output)")
            let signal = try #require(try await iterator.next())
            #expect(signal.path == "/sender")
            #expect(signal.body == [
                .string("hello"), .bytes([1, 2, 3]), .dictionary(key: .uint16, value: .string, [(.uint16(76), .string("seventy-six"))]),
                .variant(.boolean(true)),
            ])
        }
    }
}
