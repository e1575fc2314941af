import DBus

/// Turns the properties read from an advertisement object (`GetAll`) into
/// `AdvertisementContent`, with bluetoothd's rules.
///
/// Properties are taken in bluetoothd's parser order, so that for example
/// `Includes: ["local-name"]` together with `LocalName` is refused the same way.
/// Unknown properties are ignored. One deliberate difference: bluetoothd
/// treats a missing `Type` as "broadcast"; the simulator refuses it, as the
/// API documents Type as required.
enum AdvertisementParser {
    /// AD types the `Data` property may not carry, because other properties
    /// (or the kernel) produce them (bluetoothd's `type_reject_list`).
    static let rejectedDataTypes: Set<UInt8> = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x14, 0x15,
        0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x27, 0x28, 0x29, 0x2A,
        0x2B, 0x3D, 0xFF,
    ]

    /// Parses and validates. `maxLength` is the controller's MaxAdvLen, which
    /// also bounds each single field.
    static func parse(_ properties: [String: DBusValue], maxLength: Int) throws(AdvertisementProblem)
        -> AdvertisementContent
    {
        var content = AdvertisementContent()
        func invalid(_ property: String) -> AdvertisementProblem { .invalid("Error parsing \(property) property") }
        func tooLong(_ length: Int) -> AdvertisementProblem { .tooLong(length: length, budget: maxLength) }

        guard let type = properties["Type"] else { throw .invalid("Type is missing") }
        guard case .string(let typeName) = type, let kind = AdvertisementContent.Kind(rawValue: typeName) else {
            throw invalid("Type")
        }
        content.kind = kind

        if let value = properties["ServiceUUIDs"] {
            guard let uuids = uuidList(value) else { throw invalid("ServiceUUIDs") }
            content.serviceUUIDs = uuids
        }
        if let value = properties["SolicitUUIDs"] {
            guard let uuids = uuidList(value) else { throw invalid("SolicitUUIDs") }
            content.solicitUUIDs = uuids
        }
        if let value = properties["ManufacturerData"] {
            guard case .array(.dictEntry(key: .uint16, value: .variant), let entries) = value else {
                throw invalid("ManufacturerData")
            }
            for case .dictEntry(.uint16(let company), let data) in entries {
                guard case .variant(.array(.byte, _)) = data, let bytes = data.bytes else {
                    throw invalid("ManufacturerData")
                }
                guard bytes.count <= maxLength - 4 else { throw tooLong(4 + bytes.count) }
                if let index = content.manufacturerData.firstIndex(where: { $0.company == company }) {
                    content.manufacturerData[index].bytes = bytes
                } else {
                    content.manufacturerData.append(.init(company: company, bytes: bytes))
                }
            }
        }
        if let value = properties["ServiceData"] {
            guard case .array(.dictEntry(key: .string, value: .variant), let entries) = value else {
                throw invalid("ServiceData")
            }
            for case .dictEntry(.string(let key), let data) in entries {
                guard let uuid = BluetoothUUID(key), case .variant(.array(.byte, _)) = data, let bytes = data.bytes
                else { throw invalid("ServiceData") }
                guard bytes.count <= maxLength - 2 - uuid.width.rawValue else {
                    throw tooLong(2 + uuid.width.rawValue + bytes.count)
                }
                content.serviceData.append(.init(uuid: uuid, bytes: bytes))
            }
        }
        if let value = properties["Includes"] {
            guard case .array(.string, let elements) = value else { throw invalid("Includes") }
            for case .string(let name) in elements {
                if let include = AdvertisementContent.Include(rawValue: name) { content.includes.insert(include) }
            }
        }
        if let value = properties["LocalName"] {
            guard case .string(let name) = value, !content.includes.contains(.localName) else {
                throw invalid("LocalName")
            }
            content.localName = name.isEmpty ? nil : name
        }
        if let value = properties["Appearance"] {
            guard case .uint16(let appearance) = value, !content.includes.contains(.appearance) else {
                throw invalid("Appearance")
            }
            content.appearance = appearance
        }
        if let value = properties["Duration"] {
            guard case .uint16(let duration) = value else { throw invalid("Duration") }
            content.duration = duration
        }
        if let value = properties["Timeout"] {
            guard case .uint16(let timeout) = value else { throw invalid("Timeout") }
            content.timeout = timeout
        }
        if let value = properties["Data"] {
            guard case .array(.dictEntry(key: .byte, value: .variant), let entries) = value else {
                throw invalid("Data")
            }
            for case .dictEntry(.byte(let type), let data) in entries {
                guard case .variant(.array(.byte, _)) = data, let bytes = data.bytes,
                    !rejectedDataTypes.contains(type)
                else { throw invalid("Data") }
                guard bytes.count <= maxLength - 2 else { throw tooLong(2 + bytes.count) }
                content.data.append(.init(type: type, bytes: bytes))
            }
        }
        if let value = properties["Discoverable"] {
            guard case .boolean(let discoverable) = value else { throw invalid("Discoverable") }
            content.discoverable = discoverable
        }
        if let value = properties["DiscoverableTimeout"] {
            guard case .uint16(let timeout) = value else { throw invalid("DiscoverableTimeout") }
            content.discoverableTimeout = timeout
        }
        if let value = properties["SecondaryChannel"] {
            // Legacy controllers support no secondary channel at all.
            _ = value
            throw invalid("SecondaryChannel")
        }
        if let value = properties["MinInterval"] {
            guard case .uint32(let milliseconds) = value, let units = intervalUnits(milliseconds) else {
                throw invalid("MinInterval")
            }
            content.minInterval = units
        }
        if let value = properties["MaxInterval"] {
            guard case .uint32(let milliseconds) = value, let units = intervalUnits(milliseconds) else {
                throw invalid("MaxInterval")
            }
            content.maxInterval = units
        }
        if let value = properties["TxPower"] {
            guard case .int16(let power) = value, (-127...20).contains(power) else { throw invalid("TxPower") }
            content.txPower = power
        }

        if content.discoverable == true {
            // "A device in the broadcast mode shall not set the LE General or
            // Limited Discoverable Mode flag."
            if content.kind == .broadcast { throw .invalid("Broadcast cannot set flags") }
        } else {
            content.discoverableTimeout = 0  // ignored when not discoverable
        }
        if content.timeout > 0 && content.timeout < content.discoverableTimeout {
            throw .invalid("DiscoverableTimeout > Timeout")
        }
        if content.minInterval > content.maxInterval {
            throw .invalid("MinInterval must be less than MaxInterval (\(content.minInterval) > \(content.maxInterval))")
        }
        return content
    }

    private static func uuidList(_ value: DBusValue) -> [BluetoothUUID]? {
        guard case .array(.string, let elements) = value else { return nil }
        var uuids: [BluetoothUUID] = []
        for case .string(let text) in elements {
            guard let uuid = BluetoothUUID(text) else { return nil }
            uuids.append(uuid)
        }
        return uuids
    }

    /// Milliseconds to 0.625 ms units, nil outside [0x20, 0xFFFFFF] units.
    private static func intervalUnits(_ milliseconds: UInt32) -> UInt32? {
        let units = UInt64(Double(milliseconds) / 0.625)
        guard (0x20...0xFF_FFFF).contains(units) else { return nil }
        return UInt32(units)
    }
}
