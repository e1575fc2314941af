/// An LE device address with its type, as bluetoothd's `Adapter1.Address` / `AddressType`
/// and `Device1.Address` / `AddressType` give them: `AA:BB:CC:DD:EE:FF` and `public` or
/// `random` (a static, resolvable private or non-resolvable address).
public struct LEAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case `public`
        case random
    }

    /// The six bytes as written: `AA:…` is `bytes[0] == 0xAA`.
    public let bytes: [UInt8]
    public let kind: Kind

    /// Parses `AA:BB:CC:DD:EE:FF` (either case) and `public` or `random`.
    public init(_ text: String, type: String) throws(L2CAPError) {
        guard let kind = Kind(rawValue: type) else {
            throw .invalidAddress("address type '\(type)' is neither public nor random")
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, part.allSatisfy(\.isHexDigit), let byte = UInt8(part, radix: 16) else {
                throw .invalidAddress("'\(text)' is not an address of the form AA:BB:CC:DD:EE:FF")
            }
            bytes.append(byte)
        }
        guard bytes.count == 6 else {
            throw .invalidAddress("'\(text)' is not an address of the form AA:BB:CC:DD:EE:FF")
        }
        self.bytes = bytes
        self.kind = kind
    }

    public init(bytes: [UInt8], kind: Kind) {
        precondition(bytes.count == 6, "an LE address has 6 bytes")
        self.bytes = bytes
        self.kind = kind
    }

    /// `AA:BB:CC:DD:EE:FF`, upper case.
    public var text: String {
        bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
    }

    public var description: String { "\(text) (\(kind.rawValue))" }
}
