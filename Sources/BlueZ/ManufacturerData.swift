import DBus

/// `Device1.ManufacturerData`: the Manufacturer Specific Data bluetoothd has
/// received from a device, by company ID (`a{qv}`, each variant holding `ay`).
///
/// bluetoothd keeps one entry per company ID and sends the whole property in
/// every `PropertiesChanged`, so a new value replaces the old one. The entries
/// stay in the order bluetoothd sent them; a list rather than a dictionary,
/// because a device sends one or two and this is built per advertisement.
public struct ManufacturerData: Sendable, Equatable {
    /// The data filed under one company ID.
    public struct Entry: Sendable, Equatable {
        /// The Bluetooth SIG company identifier (0xFFFF: none, for tests).
        public var company: UInt16
        /// The data after the company ID.
        public var bytes: [UInt8]

        public init(company: UInt16, bytes: [UInt8]) {
            self.company = company
            self.bytes = bytes
        }
    }

    public var entries: [Entry]

    public init(_ entries: [Entry] = []) {
        self.entries = entries
    }

    /// Decodes the property's value; nil for any shape but `a{qv}` of `ay`.
    public init?(_ value: DBusValue) {
        guard case .array(.dictEntry(.uint16, .variant), let elements) = value else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(elements.count)
        for element in elements {
            guard case .dictEntry(.uint16(let company), let data) = element, let bytes = data.bytes else { return nil }
            entries.append(Entry(company: company, bytes: bytes))
        }
        self.entries = entries
    }

    /// The bytes filed under `company`; with a repeated key the last entry wins,
    /// as in a dictionary.
    public subscript(company: UInt16) -> [UInt8]? {
        entries.last { $0.company == company }?.bytes
    }

    /// Entries by company ID.
    public var dictionary: [UInt16: [UInt8]] {
        Dictionary(entries.map { ($0.company, $0.bytes) }) { _, last in last }
    }

    /// The property's value, as bluetoothd sends it.
    public var value: DBusValue {
        .dictionary(key: .uint16, value: .variant, entries.map { (.uint16($0.company), .variant(.bytes($0.bytes))) })
    }
}

extension ManufacturerData {
    /// Reads the variant at `reader`'s position in place, without building a
    /// `DBusValue`; nil (the reader left where it was) for any other shape.
    init?(reading reader: DBusMessageReader) {
        guard reader.enter() else { return nil }
        defer { reader.leave() }
        guard reader.elementTypeCode == UInt8(ascii: "e"), reader.enter() else { return nil }
        defer { reader.leave() }
        var entries: [Entry] = []
        while reader.typeCode == UInt8(ascii: "e") {
            reader.enter()
            defer {
                reader.leave()
                reader.next()
            }
            guard let company = reader.readUInt16(), reader.next(), reader.enter() else { return nil }
            defer { reader.leave() }
            guard let bytes = reader.readBytes() else { return nil }
            entries.append(Entry(company: company, bytes: bytes))
        }
        self.entries = entries
    }
}
