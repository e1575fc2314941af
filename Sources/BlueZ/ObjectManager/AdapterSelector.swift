#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import DBus

/// Which adapter to use.
public enum AdapterSelector: Sendable, Equatable, CustomStringConvertible {
    /// The first powered adapter, or else the first adapter (by path).
    case automatic
    /// The adapter with this interface name, such as `hci0`.
    case name(String)
    /// The adapter with this Bluetooth address (case-insensitive).
    case address(String)

    /// Parses a configuration value: "auto" (or empty), an address, or a name.
    public init(_ text: String) {
        let trimmed = text.trimmingWhitespaceCharacters()
        if trimmed.isEmpty || trimmed == "auto" {
            self = .automatic
        } else if trimmed.split(separator: ":").count == 6 {
            self = .address(trimmed.uppercased())
        } else {
            self = .name(trimmed)
        }
    }

    /// The adapter this selector picks among `adapters`.
    public func choose(from adapters: [Adapter1]) -> Adapter1? {
        switch self {
        case .automatic: adapters.first(where: \.powered) ?? adapters.first
        case .name(let name): adapters.first { $0.interfaceName == name }
        case .address(let address): adapters.first { $0.address.uppercased() == address.uppercased() }
        }
    }

    public var description: String {
        switch self {
        case .automatic: "the first powered adapter"
        case .name(let name): name
        case .address(let address): "adapter \(address)"
        }
    }
}
