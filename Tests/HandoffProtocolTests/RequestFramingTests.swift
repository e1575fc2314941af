import Foundation
import HandoffProtocol
import Testing

/// Issue 20: what the framing of docs/protocol.md promises, at its edges.
@Suite struct RequestFramingTests {
    /// "Request ids are integers": a request without one, or with null, is refused, not run.
    @Test(arguments: [
        "{\"method\":\"status\"}", "{\"id\":null,\"method\":\"status\"}", "{\"id\":\"7\",\"method\":\"status\"}",
        "{\"id\":1.5,\"method\":\"status\"}",
    ])
    func aRequestWithoutAnIntegerIDIsInvalidJSON(_ text: String) {
        var id: Int?
        do {
            _ = try WireFormat.requestHeader(Data(text.utf8), id: &id)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.code == .invalidJSON)
            #expect(id == nil)
        }
    }

    /// The CR of a CRLF is not part of the line: a line of exactly the limit ending in CRLF is read.
    @Test func aFullLengthLineEndingInCRLFIsRead() {
        var lines = LineBuffer(maximumLength: 16384)
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 16384)
        #expect(lines.append(body + [13, 10]) == [.line(body)])
        // One byte more is too long, with or without the CR, and the next line is read as usual.
        #expect(lines.append(body + [UInt8(ascii: "y"), 13, 10, UInt8(ascii: "z"), 10]) == [.tooLong, .line([UInt8(ascii: "z")])])
        #expect(lines.append(body + [13, 13, 10]) == [.tooLong])
        // Fed byte by byte, the same.
        var items: [LineBuffer.Item] = []
        for byte in body + [13, 10] { items += lines.append([byte]) }
        #expect(items == [.line(body)])
    }
}
