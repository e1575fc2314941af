import Foundation
import HandoffProtocol

/// Builds an activity's `userInfo` from `--info-json` and `--info k=v` options.
enum UserInfoArguments {
    /// The object `--info-json` gives, overlaid with each `--info key=value` in order.
    /// - Throws: a message naming the argument at fault.
    static func build(pairs: [String], json: String?) throws(UserInfoError) -> [String: JSONValue]? {
        var info: [String: JSONValue] = [:]
        if let json {
            guard let object = try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)).objectValue else {
                throw UserInfoError("--info-json must be a JSON object, like '{\"page\": 3}'")
            }
            info = object
        }
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw UserInfoError("--info takes key=value, not \(String(reflecting: pair))")
            }
            info[String(pair[..<equals])] = value(of: String(pair[pair.index(after: equals)...]))
        }
        return pairs.isEmpty && json == nil ? nil : info
    }

    /// `true`/`false` as booleans, finite numbers as numbers, anything else as a string.
    static func value(of text: String) -> JSONValue {
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        default:
            let looksNumeric = text.first.map { $0.isNumber || $0 == "-" || $0 == "." } ?? false
            if looksNumeric, let number = Double(text), number.isFinite { return .number(number) }
            return .string(text)
        }
    }
}

/// Why `--info` or `--info-json` was refused.
struct UserInfoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
