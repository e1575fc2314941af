import Foundation
import HandoffKit
import HandoffProtocol

/// `--json` output: the daemon's result, as the protocol encodes it, on one line.
enum JSONOutput {
    /// Sends `method` and prints its result object unchanged (keys sorted, compact).
    static func printResult<P: Encodable & Sendable>(of method: HandoffProtocol.Method, _ params: P, on connection: HandoffConnection)
        async throws
    {
        let result = try await connection.request(method, params, as: JSONValue.self)
        try printValue(result)
    }

    /// A read command's output: with `json`, the daemon's result for `method` (no params)
    /// unchanged; otherwise the text `render` makes.
    static func printRead(
        _ method: HandoffProtocol.Method, json: Bool, on connection: HandoffConnection,
        _ render: (HandoffConnection) async throws -> String
    ) async throws {
        if json {
            try await printResult(of: method, EmptyParams(), on: connection)
        } else {
            Terminal.printLine(try await render(connection))
        }
    }

    /// Prints any encodable value as one compact JSON line.
    static func printValue<T: Encodable>(_ value: T) throws {
        Terminal.printLine(String(decoding: try WireFormat.compactJSON(value), as: UTF8.self))
    }
}
