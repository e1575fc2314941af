import DBus

/// `Device1.ManufacturerData`: the Manufacturer Specific Data bluetoothd has
/// received from a device, by company ID (`a{qv}`, each variant holding `ay`).
///
/// bluetoothd keeps one entry per company ID and sends the whole property in
/// every `PropertiesChanged`, so a new value replaces the old one. The entries
/// stay in the order bluetoothd sent them; a list rather than a dictionary,
/// because a device sends one or two and this is built per advertisement, and
/// the first entry is held inline, so the usual single entry costs no list.
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

    /// The first entry, and the others.
    private var first: Entry?
    private var rest: [Entry] = []

    /// The entries, in the order bluetoothd sent them.
    public var entries: [Entry] {
        guard let first else { return [] }
        return [first] + rest
    }

    /// True when there are no entries.
    public var isEmpty: Bool { first == nil }

    public init(_ entries: [Entry] = []) {
        for entry in entries { append(entry) }
    }

    private mutating func append(_ entry: Entry) {
        if first == nil { first = entry } else { rest.append(entry) }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.first == rhs.first && lhs.rest == rhs.rest
    }

    /// Decodes the property's value; nil for any shape but `a{qv}` of `ay`.
    public init?(_ value: DBusValue) {
        guard let decoded = try? ManufacturerData(decoding: value) else { return nil }
        self = decoded
    }

    /// Decodes the property's value.
    /// - Throws: `DBusDecodingError.typeMismatch` for any shape but `a{qv}` of `ay`.
    public init(decoding value: DBusValue) throws(DBusDecodingError) {
        guard case .array(.dictEntry(.uint16, .variant), let elements) = value else {
            throw .typeMismatch(expected: "a{qv}", actual: value.type.signature, context: "ManufacturerData")
        }
        for case .dictEntry(.uint16(let company), let data) in elements {
            guard let bytes = data.bytes else {
                throw .typeMismatch(expected: "ay", actual: data.unwrapped.type.signature, context: "ManufacturerData")
            }
            append(Entry(company: company, bytes: bytes))
        }
    }

    /// The bytes filed under `company`; with a repeated key the last entry wins,
    /// as in a dictionary.
    public subscript(company: UInt16) -> [UInt8]? {
        if let found = rest.last(where: { $0.company == company }) { return found.bytes }
        return first?.company == company ? first?.bytes : nil
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
        while reader.typeCode == UInt8(ascii: "e") {
            reader.enter()
            defer {
                reader.leave()
                reader.next()
            }
            guard let company = reader.readUInt16(), reader.next(), reader.enter() else { return nil }
            defer { reader.leave() }
            guard let bytes = reader.readBytes() else { return nil }
            append(Entry(company: company, bytes: bytes))
        }
    }
}
