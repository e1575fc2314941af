import HandoffProtocol
import Testing

@Suite struct LineBufferTests {
    @Test func splitsLinesAcrossChunks() {
        var buffer = LineBuffer(maximumLength: 64)
        #expect(buffer.append(Array("{\"a\":".utf8)) == [])
        #expect(buffer.append(Array("1}\n{\"b\":2}\r\n\n".utf8)) == [.line(Array("{\"a\":1}".utf8)), .line(Array("{\"b\":2}".utf8))])
        #expect(buffer.bufferedCount == 0)
    }

    @Test func reportsAnOverlongLineOnceAndKeepsReading() {
        var buffer = LineBuffer(maximumLength: 8)
        let items = buffer.append(Array("0123456789abcdef".utf8))
        #expect(items == [.tooLong])
        #expect(buffer.append(Array("more junk".utf8)) == [])
        #expect(buffer.append(Array("\nok\n".utf8)) == [.line(Array("ok".utf8))])
    }

    @Test func aLineOfExactlyTheLimitIsAccepted() {
        var buffer = LineBuffer(maximumLength: 4)
        #expect(buffer.append(Array("abcd\n".utf8)) == [.line(Array("abcd".utf8))])
    }
}
