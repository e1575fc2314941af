import Foundation
import HandoffProtocol
import Testing

/// The socket protocol's parts of continuation streams (docs/protocol.md, "Continuation streams"): `continue`'s
/// `streams`, `continued`'s `stream`, the event `streamOpened` and the failure `streams-unsupported`, as the
/// wire spells them. (ProtocolDocumentTests checks that the document's examples re-encode exactly.)
@Suite struct StreamMessagesTests {
    static func event(_ text: String) throws -> (EventName, Data) {
        guard case .event(let name, let line) = try WireFormat.incoming(Data(text.utf8)) else {
            throw ProtocolError(.invalidJSON, "not an event: \(text)")
        }
        return (name, line)
    }

    @Test func continueTakesStreamsAndLeavesItOutWhenAbsent() throws {
        let line = try WireFormat.request(id: 19, method: .continue, params: ContinueParams(id: "7d20e4a1", streams: true))
        #expect(String(decoding: line, as: UTF8.self) == "{\"id\":19,\"method\":\"continue\",\"params\":{\"id\":\"7d20e4a1\",\"streams\":true}}\n")
        let plain = try WireFormat.request(id: 20, method: .continue, params: ContinueParams(id: "7d20e4a1"))
        #expect(!String(decoding: plain, as: UTF8.self).contains("streams"))
        let absent = Data("{\"id\":20,\"method\":\"continue\",\"params\":{\"id\":\"7d20e4a1\"}}".utf8)
        #expect(try WireFormat.params(ContinueParams.self, from: absent).streams == nil)
        let wrong = Data("{\"id\":21,\"method\":\"continue\",\"params\":{\"id\":\"x\",\"streams\":\"yes\"}}".utf8)
        #expect { try WireFormat.params(ContinueParams.self, from: wrong) } throws: { error in
            (error as? ProtocolError)?.code == .invalidParams && (error as? ProtocolError)?.message.contains("streams") == true
        }
    }

    @Test func continuedCarriesTheStreamPathOnlyWhenThereIsOne() throws {
        let (name, line) = try Self.event(
            #"{"data":{"activity":{"account":"alice","device":"8c41d2f0","title":"Whiteboard","type":"org.example.whiteboard"},"continuation":"c4","stream":{"path":"/run/handoffd/3f.stream"}},"event":"continued"}"#)
        #expect(name == .continued)
        #expect(try WireFormat.eventData(ContinuedEvent.self, from: line).stream == StreamSocket(path: "/run/handoffd/3f.stream"))
        let (_, without) = try Self.event(
            #"{"data":{"activity":{"account":"alice","device":"8c41d2f0","type":"org.example.whiteboard"},"continuation":"c5"},"event":"continued"}"#)
        #expect(try WireFormat.eventData(ContinuedEvent.self, from: without).stream == nil)
        let activity = ContinuedActivity(type: "t", account: "a", device: "8c41d2f0")
        let encoded = try WireFormat.event(.continued, ContinuedEvent(continuation: "c6", activity: activity))
        #expect(!String(decoding: encoded, as: UTF8.self).contains("stream"))
    }

    @Test func streamOpenedIsAnEventWithIdPathAndByDevice() throws {
        let event = StreamOpenedEvent(id: "a2", path: "/run/handoffd/b1.stream", byDevice: "27be90c4")
        let line = try WireFormat.event(.streamOpened, event)
        #expect(String(decoding: line, as: UTF8.self)
            == #"{"data":{"byDevice":"27be90c4","id":"a2","path":"/run/handoffd/b1.stream"},"event":"streamOpened"}"# + "\n")
        let (name, data) = try Self.event(String(decoding: line.dropLast(), as: UTF8.self))
        #expect(name == .streamOpened && EventName(rawValue: "streamOpened") == .streamOpened)
        #expect(try WireFormat.eventData(StreamOpenedEvent.self, from: data) == event)
    }

    @Test func streamsUnsupportedIsAContinueFailedCode() throws {
        #expect(ContinueError.Code(rawValue: "streams-unsupported") == .streamsUnsupported)
        let (_, line) = try Self.event(
            #"{"data":{"code":"streams-unsupported","continuation":"c1","message":"the origin device made no stream offer","nearbyID":"n1"},"event":"continueFailed"}"#)
        let failed = try WireFormat.eventData(ContinueFailedEvent.self, from: line)
        let error = ContinueError(failed)
        #expect(error == .streamsUnsupported("the origin device made no stream offer"))
        #expect(error.code == .streamsUnsupported && error.message == "the origin device made no stream offer")
    }
}
