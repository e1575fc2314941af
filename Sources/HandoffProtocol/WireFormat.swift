#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The encoding of protocol frames: one compact JSON object per line.
///
/// - request:  `{"id":7,"method":"publish","params":{…}}`
/// - success:  `{"id":7,"result":{…}}`
/// - failure:  `{"id":7,"error":{"code":"payload-too-large","message":"…"}}`
/// - event:    `{"event":"appeared","data":{…}}`
///
/// Keys are sorted and times are RFC 3339 strings with milliseconds, in UTC.
public enum WireFormat {
    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(timestampStyle))
        }
        return encoder
    }

    static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? timestampStyle.parse(text) { return date }
            if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 time: \(text)")
        }
        return decoder
    }

    static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    // MARK: Encoding (each result ends in "\n")

    private struct RequestFrame<P: Encodable>: Encodable {
        var id: Int
        var method: String
        var params: P
    }
    private struct ResultFrame<R: Encodable>: Encodable {
        var id: Int?
        var result: R
    }
    private struct ErrorFrame: Encodable {
        var id: Int?
        var error: ProtocolError
    }
    private struct EventFrame<D: Encodable>: Encodable {
        var event: String
        var data: D
    }

    public static func request<P: Encodable>(id: Int, method: Method, params: P) throws -> Data {
        try line(RequestFrame(id: id, method: method.rawValue, params: params))
    }

    public static func result<R: Encodable>(id: Int?, _ result: R) throws -> Data {
        try line(ResultFrame(id: id, result: result))
    }

    public static func error(id: Int?, _ error: ProtocolError) -> Data {
        // A ProtocolError always encodes.
        (try? line(ErrorFrame(id: id, error: error))) ?? Data("{\"error\":{\"code\":\"internal\",\"message\":\"\"}}\n".utf8)
    }

    public static func event<D: Encodable>(_ name: EventName, _ data: D) throws -> Data {
        try line(EventFrame(event: name.rawValue, data: data))
    }

    /// The compact JSON encoding of `value`, without a newline (used to measure userInfo).
    public static func compactJSON<T: Encodable>(_ value: T) throws -> Data {
        try makeEncoder().encode(value)
    }

    private static func line<T: Encodable>(_ value: T) throws -> Data {
        var data = try makeEncoder().encode(value)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    // MARK: Decoding requests (daemon side)

    /// The part of a request line every request has.
    public struct RequestHeader: Sendable {
        public var id: Int?
        public var method: Method
    }

    private struct RawHeader: Decodable {
        var id: Int?
        var method: String?
    }

    /// Reads `id` and `method` from a request line.
    /// - Throws: `ProtocolError` with `invalid-json` or `unknown-method`; the `id`
    ///   found (if any) is returned through `id` so the error can answer it.
    public static func requestHeader(_ line: Data, id: inout Int?) throws(ProtocolError) -> RequestHeader {
        let raw: RawHeader
        do {
            raw = try makeDecoder().decode(RawHeader.self, from: line)
        } catch {
            throw ProtocolError(.invalidJSON, "the request is not a JSON object with an integer \"id\" and a \"method\": \(describe(error))")
        }
        id = raw.id
        guard raw.id != nil else {
            // docs/protocol.md, Framing: request ids are integers; a request without one is not run.
            throw ProtocolError(.invalidJSON, "the request has no integer \"id\"; it was not run")
        }
        guard let name = raw.method else {
            throw ProtocolError(.unknownMethod, "the request has no \"method\"")
        }
        guard let method = Method(rawValue: name) else {
            throw ProtocolError(
                .unknownMethod,
                "unknown method \"\(name)\"; known methods: \(Method.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return RequestHeader(id: raw.id, method: method)
    }

    private struct ParamsFrame<P: Decodable>: Decodable {
        var params: P?
    }

    /// Reads `params` as `P`. Absent params read as `{}`.
    /// - Throws: `ProtocolError(.invalidParams)` naming the field at fault.
    public static func params<P: Decodable>(_ type: P.Type, from line: Data) throws(ProtocolError) -> P {
        let decoder = makeDecoder()
        do {
            if let params = try decoder.decode(ParamsFrame<P>.self, from: line).params { return params }
            return try decoder.decode(P.self, from: Data("{}".utf8))
        } catch {
            throw ProtocolError(.invalidParams, describe(error))
        }
    }

    // MARK: Decoding on the client side

    /// A line from the daemon.
    public enum Incoming: Sendable {
        case result(id: Int?, line: Data)
        case error(id: Int?, ProtocolError)
        case event(EventName, line: Data)
        /// An event this build does not know; clients must ignore it (a later daemon may send new ones).
        case unknownEvent(String, line: Data)
    }

    private struct RawIncoming: Decodable {
        var id: Int?
        var error: ProtocolError?
        var event: String?
        var hasResult: Bool
        enum CodingKeys: String, CodingKey { case id, error, event, result }
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decodeIfPresent(Int.self, forKey: .id)
            error = try c.decodeIfPresent(ProtocolError.self, forKey: .error)
            event = try c.decodeIfPresent(String.self, forKey: .event)
            hasResult = c.contains(.result)
        }
    }

    public static func incoming(_ line: Data) throws -> Incoming {
        let raw = try makeDecoder().decode(RawIncoming.self, from: line)
        if let error = raw.error { return .error(id: raw.id, error) }
        if let event = raw.event {
            guard let name = EventName(rawValue: event) else { return .unknownEvent(event, line: line) }
            return .event(name, line: line)
        }
        guard raw.hasResult else { throw ProtocolError(.invalidJSON, "a line with neither result, error nor event") }
        return .result(id: raw.id, line: line)
    }

    private struct ResultOnly<R: Decodable>: Decodable { var result: R }
    private struct DataOnly<D: Decodable>: Decodable { var data: D }

    public static func resultValue<R: Decodable>(_ type: R.Type, from line: Data) throws -> R {
        try makeDecoder().decode(ResultOnly<R>.self, from: line).result
    }

    public static func eventData<D: Decodable>(_ type: D.Type, from line: Data) throws -> D {
        try makeDecoder().decode(DataOnly<D>.self, from: line).data
    }

    // MARK: Errors people can read

    /// A one-line description of a decoding error: which field, what was wrong.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        func path(_ keys: [any CodingKey]) -> String {
            let names = keys.filter { $0.stringValue != "params" }.map { key in
                key.intValue.map { "[\($0)]" } ?? key.stringValue
            }
            return names.isEmpty ? "params" : names.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(describeType(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(describeType(type)), found null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            #if canImport(FoundationEssentials)
            // FoundationEssentials' JSONDecoder gives malformed JSON no underlying error (only
            // Darwin's Foundation does, an NSError, below); NSError is not in FoundationEssentials.
            let detail = context.underlyingError.map(localizedDescription) ?? context.debugDescription
            #else
            let detail = (context.underlyingError as NSError?)?.localizedDescription ?? context.debugDescription
            #endif
            return context.codingPath.isEmpty ? "malformed JSON: \(detail)" : "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return String(describing: error)
        }
    }

    #if canImport(FoundationEssentials)
    /// What `NSError.localizedDescription` gives for a Swift error that says what went wrong.
    private static func localizedDescription(_ error: any Error) -> String {
        (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
    }
    #endif

    private static func describeType(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is [String].Type: "an array of strings"
        default:
            String(describing: type).hasPrefix("Dictionary") ? "an object" : "a value of type \(type)"
        }
    }
}
