import ArgumentParser
import Foundation

/// A duration on the command line: `30s`, `5m`, `1h`, or plain seconds (`90`, `1.5`).
struct DurationArgument: ExpressibleByArgument, CustomStringConvertible, Sendable {
    /// The length in seconds, always positive.
    var seconds: Double
    /// How it was written.
    var description: String

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(suffix: String, scale: Double)] = [("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text)
        var scale = 1.0
        if let unit = units.first(where: { text.hasSuffix($0.suffix) }) {
            number = number.dropLast(unit.suffix.count)
            scale = unit.scale
        }
        guard let value = Double(number), value.isFinite, value > 0 else { return nil }
        seconds = value * scale
        description = argument
    }

    static var defaultCompletionKind: CompletionKind { .list(["30s", "5m", "1h"]) }
}
