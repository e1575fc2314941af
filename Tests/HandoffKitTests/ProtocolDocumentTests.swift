import Foundation
import HandoffProtocol
import Testing

/// Keeps docs/protocol.md true: its example frames are exactly what `WireFormat`
/// produces, and its hexdump is of real frames.
@Suite struct ProtocolDocumentTests {
    static let documentURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/protocol.md")

    static func document() throws -> String {
        try String(contentsOf: documentURL, encoding: .utf8)
    }

    @Test func theHexdumpIsOfRealFrames() throws {
        let text = try Self.document()
        let request = try WireFormat.request(id: 1, method: .hello, params: HelloParams(app: "handoffctl", versions: [1]))
        let response = try WireFormat.result(id: 1, HelloResult(version: 1, daemon: "handoffd 0.1.0"))
        #expect(text.contains(Hexdump.xxd(request)))
        #expect(text.contains(Hexdump.xxd(response)))
    }

    @Test func theHexdumpFormatIsXxds() {
        #expect(Hexdump.xxd(Data("{\"a\":1}\n".utf8)) == "00000000: 7b22 6122 3a31 7d0a                      {\"a\":1}.")
    }

    @Test func everyExampleFrameIsCanonical() throws {
        var checked = 0
        for block in try Self.codeBlocks() {
            var methods: [Int: HandoffProtocol.Method] = [:]
            for line in block {
                if line.hasPrefix("→ ") {
                    let frame = Data(line.dropFirst(2).utf8)
                    var id: Int?
                    let header = try WireFormat.requestHeader(frame, id: &id)
                    let requestID = try #require(id, "a request without id: \(line)")
                    methods[requestID] = header.method
                    let encoded = try Self.reencodeRequest(header.method, id: requestID, frame)
                    #expect(encoded == frame + [0x0a], "not canonical: \(line)")
                    checked += 1
                } else if line.hasPrefix("← ") {
                    let frame = Data(line.dropFirst(2).utf8)
                    let encoded: Data
                    switch try WireFormat.incoming(frame) {
                    case .result(let id, _):
                        let method = try #require(id.flatMap { methods[$0] }, "a response to no request: \(line)")
                        encoded = try Self.reencodeResult(method, id: id, frame)
                    case .error(let id, let error):
                        encoded = WireFormat.error(id: id, error)
                    case .event(let name, _):
                        encoded = try Self.reencodeEvent(name, frame)
                    case .unknownEvent(let name, _):
                        Issue.record("the document shows an event this build does not know: \(name)")
                        continue
                    }
                    #expect(encoded == frame + [0x0a], "not canonical: \(line)")
                    checked += 1
                }
            }
        }
        #expect(checked > 40)
    }

    @Test func everyMethodEventAndErrorCodeIsDocumented() throws {
        let text = try Self.document()
        for method in HandoffProtocol.Method.allCases {
            #expect(text.contains("\n### \(method.rawValue)\n"), "no section for \(method.rawValue)")
            #expect(text.contains("\"method\":\"\(method.rawValue)\""), "no example of \(method.rawValue)")
        }
        for event in EventName.allCases {
            #expect(text.contains("| `\(event.rawValue)` |"), "event \(event.rawValue) is not in the table")
            #expect(text.contains("\"event\":\"\(event.rawValue)\""), "no example of event \(event.rawValue)")
        }
        for code in ErrorCode.allCases {
            #expect(text.contains("| `\(code.rawValue)` |"), "error code \(code.rawValue) is not in the table")
        }
        #expect(text.contains("\(ProtocolLimits.maximumLineLength) bytes"))
        #expect(text.contains("\(ProtocolLimits.maximumUserInfoBytes) bytes"))
        #expect(text.contains("\(ProtocolLimits.maximumTitleBytes) bytes"))
        #expect(text.contains("\(ProtocolLimits.maximumURLBytes) bytes"))
    }

    /// The lines of every fenced code block.
    static func codeBlocks() throws -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in try document().split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let block = current { blocks.append(block) }
                current = current == nil ? [] : nil
            } else {
                current?.append(String(line))
            }
        }
        return blocks
    }

    static func reencodeRequest(_ method: HandoffProtocol.Method, id: Int, _ frame: Data) throws -> Data {
        func again<P: Codable>(_ type: P.Type) throws -> Data {
            try WireFormat.request(id: id, method: method, params: WireFormat.params(type, from: frame))
        }
        switch method {
        case .hello: return try again(HelloParams.self)
        case .publish: return try again(PublishParams.self)
        case .update: return try again(UpdateParams.self)
        case .resign, .invalidate: return try again(ActivityIDParams.self)
        case .subscribe: return try again(SubscribeParams.self)
        case .list, .unsubscribe, .status, .accountList, .devices: return try again(EmptyParams.self)
        case .accountCreate, .accountExport, .accountRemove: return try again(AccountNameParams.self)
        case .accountImport: return try again(AccountImportParams.self)
        case .continue: return try again(ContinueParams.self)
        case .continueCancel: return try again(ContinuationParams.self)
        case .pairOffer: return try again(PairOfferParams.self)
        case .pairJoin: return try again(PairJoinParams.self)
        case .pairConfirm: return try again(PairConfirmParams.self)
        case .pairCancel: return try again(PairingParams.self)
        case .devicesRemove: return try again(DevicesRemoveParams.self)
        }
    }

    static func reencodeResult(_ method: HandoffProtocol.Method, id: Int?, _ frame: Data) throws -> Data {
        func again<R: Codable>(_ type: R.Type) throws -> Data {
            try WireFormat.result(id: id, WireFormat.resultValue(type, from: frame))
        }
        switch method {
        case .hello: return try again(HelloResult.self)
        case .publish: return try again(PublishResult.self)
        case .update, .resign, .invalidate, .subscribe, .unsubscribe, .accountRemove, .continueCancel, .pairConfirm,
            .pairCancel:
            return try again(EmptyResult.self)
        case .list: return try again(ListResult.self)
        case .status: return try again(StatusResult.self)
        case .devices: return try again(DevicesResult.self)
        case .accountCreate, .accountImport: return try again(AccountInfo.self)
        case .accountList: return try again(AccountListResult.self)
        case .accountExport: return try again(AccountExportResult.self)
        case .continue: return try again(WillContinue.self)
        case .pairOffer, .pairJoin: return try again(PairStarted.self)
        case .devicesRemove: return try again(DevicesRemoveResult.self)
        }
    }

    static func reencodeEvent(_ name: EventName, _ frame: Data) throws -> Data {
        func again<D: Codable>(_ type: D.Type) throws -> Data {
            try WireFormat.event(name, WireFormat.eventData(type, from: frame))
        }
        switch name {
        case .appeared, .updated, .lost: return try again(NearbyEvent.self)
        case .continued: return try again(ContinuedEvent.self)
        case .continueFailed: return try again(ContinueFailedEvent.self)
        case .wasContinued: return try again(WasContinuedEvent.self)
        case .streamOpened: return try again(StreamOpenedEvent.self)
        case .pairNumber: return try again(PairNumberEvent.self)
        case .pairAnswered: return try again(PairAnsweredEvent.self)
        case .paired: return try again(PairedEvent.self)
        case .pairFailed: return try again(PairFailedEvent.self)
        }
    }
}

/// `xxd`'s default output: offset, eight groups of two bytes, the bytes as text.
enum Hexdump {
    static func xxd(_ data: Data) -> String {
        let bytes = Array(data)
        return stride(from: 0, to: bytes.count, by: 16).map { start in
            let row = bytes[start..<min(start + 16, bytes.count)]
            var hex = ""
            for (index, byte) in row.enumerated() {
                if index > 0, index % 2 == 0 { hex += " " }
                hex += String(format: "%02x", byte)
            }
            let text = String(row.map { (0x20..<0x7f).contains($0) ? Character(UnicodeScalar($0)) : "." })
            return String(format: "%08x: ", start) + hex.padding(toLength: 39, withPad: " ", startingAt: 0) + "  " + text
        }.joined(separator: "\n")
    }
}
