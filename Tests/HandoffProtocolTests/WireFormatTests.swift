import Foundation
import HandoffProtocol
import Testing

@Suite struct WireFormatTests {
    @Test func requestsRoundTrip() throws {
        let params = PublishParams(
            type: "org.example.viewing", title: "Docs", userInfo: ["page": 3, "path": "/a/b"],
            webpageURL: "https://example.org/docs", expiresIn: 60, requiredUserInfoKeys: ["page"])
        let line = try WireFormat.request(id: 7, method: .publish, params: params)
        #expect(line.last == UInt8(ascii: "\n"))
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.hasPrefix("{\"id\":7,\"method\":\"publish\",\"params\":{"))
        #expect(text.contains("\"webpageURL\":\"https://example.org/docs\""))
        var id: Int?
        let header = try WireFormat.requestHeader(line.dropLast(), id: &id)
        #expect(header.method == .publish)
        #expect(id == 7)
        #expect(try WireFormat.params(PublishParams.self, from: line.dropLast()) == params)
    }

    @Test func invalidJSONIsReported() {
        var id: Int?
        #expect(throws: ProtocolError.self) { try WireFormat.requestHeader(Data("{not json".utf8), id: &id) }
        do {
            _ = try WireFormat.requestHeader(Data("[1,2]".utf8), id: &id)
            Issue.record("an array was accepted as a request")
        } catch {
            #expect(error.code == .invalidJSON)
        }
    }

    @Test func unknownAndMissingMethodsAreReportedWithTheID() {
        var id: Int?
        do {
            _ = try WireFormat.requestHeader(Data("{\"id\":3,\"method\":\"explode\"}".utf8), id: &id)
            Issue.record("unknown method accepted")
        } catch {
            #expect(error.code == .unknownMethod)
            #expect(error.message.contains("explode"))
            #expect(id == 3)
        }
        do {
            _ = try WireFormat.requestHeader(Data("{\"id\":4}".utf8), id: &id)
            Issue.record("missing method accepted")
        } catch {
            #expect(error.code == .unknownMethod)
        }
    }

    @Test func wrongFieldTypesNameTheField() {
        let line = Data("{\"id\":1,\"method\":\"publish\",\"params\":{\"type\":\"a.b\",\"userInfo\":[1,2]}}".utf8)
        do {
            _ = try WireFormat.params(PublishParams.self, from: line)
            Issue.record("an array was accepted as userInfo")
        } catch {
            #expect(error.code == .invalidParams)
            #expect(error.message.contains("userInfo"))
        }
        let missing = Data("{\"id\":1,\"method\":\"publish\",\"params\":{}}".utf8)
        do {
            _ = try WireFormat.params(PublishParams.self, from: missing)
            Issue.record("a publish without type was accepted")
        } catch {
            #expect(error.message.contains("type"))
        }
    }

    @Test func absentParamsReadAsAnEmptyObject() throws {
        let line = Data("{\"id\":1,\"method\":\"subscribe\"}".utf8)
        #expect(try WireFormat.params(SubscribeParams.self, from: line) == SubscribeParams())
    }

    @Test func responsesAndEventsDecodeOnTheClientSide() throws {
        let date = Date(timeIntervalSince1970: 1_790_000_000.25)
        let activity = NearbyActivity(
            id: "n1", account: "me", device: "0a0b0c0d", type: nil, typeHash: "deadbeef", hasPayload: true,
            hasWebpageURL: false, supportsStreams: false, rssi: -52.5, firstSeen: date, lastSeen: date)
        let event = try WireFormat.event(.appeared, NearbyEvent(activity: activity))
        guard case .event(let name, let line) = try WireFormat.incoming(event.dropLast()) else {
            Issue.record("not an event")
            return
        }
        #expect(name == .appeared)
        #expect(try WireFormat.eventData(NearbyEvent.self, from: line).activity == activity)

        // A later daemon may send events this build does not know: they are not errors.
        let future = Data("{\"data\":{},\"event\":\"somethingNew\"}".utf8)
        guard case .unknownEvent(let unknown, _) = try WireFormat.incoming(future) else {
            Issue.record("an unknown event was not reported as one")
            return
        }
        #expect(unknown == "somethingNew")

        let failure = WireFormat.error(id: 9, ProtocolError(.notFound, "no activity x"))
        guard case .error(let id, let error) = try WireFormat.incoming(failure.dropLast()) else {
            Issue.record("not an error")
            return
        }
        #expect(id == 9)
        #expect(error == ProtocolError(.notFound, "no activity x"))
    }

    @Test func userInfoEncodingIsDeterministic() throws {
        let a: [String: JSONValue] = ["b": 1, "a": ["x": true, "c": nil]]
        let first = try WireFormat.compactJSON(a)
        let second = try WireFormat.compactJSON(a)
        #expect(first == second)
        #expect(String(decoding: first, as: UTF8.self) == "{\"a\":{\"c\":null,\"x\":true},\"b\":1}")
    }
}
