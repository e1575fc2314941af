import HandoffCore
import BlueZ
import DBus
import Logging
import TOMLKit

extension DaemonConfiguration {
    /// Parses the text of a `handoffd.toml`.
    ///
    /// Absent sections and keys keep their ``defaults``. Unknown sections and
    /// keys are errors (a typo must not silently fall back to a default), as are
    /// values of the wrong type or outside their range.
    /// - Parameters:
    ///   - text: the TOML document.
    ///   - source: the file name (or another label) that errors quote.
    public static func parse(_ text: String, source: String) throws(ConfigurationError) -> DaemonConfiguration {
        let locator = ConfigurationLocator(text: text)
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError(
                source: source, line: error.source.begin.line, column: error.source.begin.column,
                problem: .syntax(error.description))
        } catch {
            throw ConfigurationError(source: source, problem: .syntax("\(error)"))
        }

        // Structure first, so that a misspelt name is reported as such rather
        // than as a strange value somewhere else.
        for name in root.keys {
            let value = root[name]
            if ConfigurationSchema.keys(of: name) == nil {
                let problem: ConfigurationError.Problem =
                    value?.table != nil
                    ? .unknownSection(name, known: ConfigurationSchema.sectionNames)
                    : .unknownKey(name, known: ConfigurationSchema.sectionNames)
                throw ConfigurationError(
                    source: source, line: locator.line(section: name, key: nil) ?? locator.line(section: nil, key: name),
                    problem: problem)
            }
            if let value, value.table == nil {
                throw ConfigurationError(
                    source: source, line: locator.line(section: nil, key: name), section: name,
                    problem: .wrongType(expected: "a section", found: ConfigurationSection.describe(value)))
            }
        }
        func section(_ name: String) -> ConfigurationSection {
            ConfigurationSection(name: name, table: root[name]?.table, source: source, locator: locator)
        }
        let sections = ConfigurationSchema.sectionNames.map(section)
        for section in sections { try section.rejectUnknownKeys() }

        var configuration = DaemonConfiguration.defaults
        try configuration.readBluetooth(section("bluetooth"))
        try configuration.readBeacon(section("beacon"))
        try configuration.readNearby(section("nearby"))
        try configuration.readScan(section("scan"))
        try configuration.readSocket(section("socket"))
        try configuration.readAccounts(section("accounts"))
        try configuration.readDevice(section("device"))
        try configuration.readStreams(section("streams"))
        try configuration.readLog(section("log"))
        try configuration.readDBus(section("dbus"))
        return configuration
    }

    private mutating func readBluetooth(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let text = try section.string("adapter", meaning: "a string (\"auto\", \"hci0\" or an adapter address)") {
            guard let adapter = Self.adapterSelector(text) else {
                throw section.error(
                    "adapter",
                    .invalidValue(
                        "\"\(text)\"",
                        reason: "is not an adapter; use \"auto\", an interface name such as \"hci0\", "
                            + "or an address such as \"00:1A:7D:DA:71:13\""))
            }
            self.adapter = adapter
        }
        if let powerOn = try section.bool("power_on") { powerOnAdapter = powerOn }
        if let company = try section.integer("company_id", in: ConfigurationLimits.companyID) {
            companyID = UInt16(company)
        }
        let limits = ConfigurationLimits.advertisingIntervalMilliseconds
        let minimum = try section.integer("advertising_min_interval_ms", in: limits)
        let maximum = try section.integer("advertising_max_interval_ms", in: limits)
        let low = minimum.map(UInt32.init) ?? advertisingIntervalMilliseconds.lowerBound
        let high = maximum.map(UInt32.init) ?? advertisingIntervalMilliseconds.upperBound
        guard low <= high else {
            throw section.error(
                minimum != nil ? "advertising_min_interval_ms" : "advertising_max_interval_ms",
                .invalidValue(
                    "\(low) ms", reason: "is more than advertising_max_interval_ms (\(high) ms); the minimum must not exceed the maximum"))
        }
        advertisingIntervalMilliseconds = low...high
        if let text = try section.string(
            "advertisement_type", meaning: "a string (\"auto\", \"peripheral\" or \"broadcast\")")
        {
            if text == "auto" {
                advertisementType = nil
            } else if let type = LEAdvertisementData.AdvertisingType(rawValue: text) {
                advertisementType = type
            } else {
                throw section.error(
                    "advertisement_type",
                    .invalidValue(
                        "\"\(text)\"",
                        reason: "is not an advertisement type; use \"auto\" (connectable only with bluetoothd's "
                            + "LE privacy on), \"peripheral\" (connectable, needed to continue activities from this "
                            + "device) or \"broadcast\""))
            }
        }
        if let text = try section.string("address_privacy", meaning: "a string (\"strict\" or \"warn\")") {
            guard let mode = AddressPrivacyMode(rawValue: text) else {
                throw section.error(
                    "address_privacy",
                    .invalidValue(
                        "\"\(text)\"",
                        reason: "is not a mode; use \"strict\" (stay off the air when the adapter's private "
                            + "address would outlive beacon epochs) or \"warn\" (advertise anyway and say so)"))
            }
            addressPrivacy = mode
        }
        if let path = try section.string("bluetoothd_main_conf", meaning: "a path to bluetoothd's main.conf") {
            guard path.hasPrefix("/") else {
                throw section.error(
                    "bluetoothd_main_conf", .invalidValue("\"\(path)\"", reason: "is not an absolute path"))
            }
            bluetoothdMainConf = path
        }
    }

    private mutating func readBeacon(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let epoch = try section.integer("epoch_seconds", in: ConfigurationLimits.epochSeconds) {
            epochSeconds = UInt32(epoch)
        }
    }

    private mutating func readNearby(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let expiry = try section.integer("expiry_seconds", in: ConfigurationLimits.nearbyExpirySeconds) {
            nearbyExpiry = .seconds(expiry)
        }
        if let cap = try section.integer("registry_cap", in: ConfigurationLimits.nearbyRegistryCap) {
            nearbyRegistryCap = cap
        }
    }

    private mutating func readScan(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let text = try section.string("monitor", meaning: "a string (\"auto\" or \"off\")") {
            guard text == "auto" || text == "off" else {
                throw section.error(
                    "monitor", .invalidValue("\"\(text)\"", reason: "is not a monitor setting; use \"auto\" or \"off\""))
            }
            scanMonitor = text == "auto"
        }
    }

    private mutating func readSocket(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let path = try section.string("path") {
            try Self.checkAbsolutePath(path, key: "path", in: section)
            guard !path.hasSuffix("/") else {
                throw section.error("path", .invalidValue("\"\(path)\"", reason: "names a directory, not a socket file"))
            }
            guard path.utf8.count <= ConfigurationLimits.socketPathBytes else {
                throw section.error(
                    "path",
                    .invalidValue(
                        "\"\(path)\"",
                        reason: "is too long for a socket address (\(path.utf8.count) bytes; at most "
                            + "\(ConfigurationLimits.socketPathBytes))"))
            }
            socketPath = path
        }
        if let text = try section.string("mode", meaning: "a quoted octal string such as \"0660\"") {
            guard let mode = Self.octalMode(text) else {
                throw section.error(
                    "mode",
                    .invalidValue(
                        "\"\(text)\"", reason: "is not an octal permission mode between \"0000\" and \"0777\" (such as \"0660\")"))
            }
            socketMode = mode
        }
        if let group = try section.string("group") {
            guard group.isEmpty || Self.isValidGroupName(group) else {
                throw section.error(
                    "group",
                    .invalidValue(
                        "\"\(group)\"", reason: "is not a valid group name or number (use \"\" to leave the group as is)"))
            }
            socketGroup = group.isEmpty ? nil : group
        }
        if let clients = try section.integer("max_clients", in: ConfigurationLimits.maxClients) {
            maxClients = clients
        }
        if let activities = try section.integer("max_activities_per_client", in: ConfigurationLimits.maxActivitiesPerClient) {
            maxActivitiesPerClient = activities
        }
        if let bytes = try section.integer("max_line_bytes", in: ConfigurationLimits.maxLineBytes) {
            maxLineBytes = bytes
        }
    }

    private mutating func readAccounts(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let directory = try section.string("directory") {
            try Self.checkAbsolutePath(directory, key: "directory", in: section)
            accountsDirectory = directory
        }
    }

    private mutating func readDevice(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let introduce = try section.bool("introduce") { self.introduce = introduce }
        if let name = try section.string("name", meaning: "a device name") {
            // "" is the default: the pretty hostname.
            guard !name.isEmpty else {
                deviceName = nil
                return
            }
            do {
                try DeviceCard.validate(name: name)
            } catch .invalidName(let why) {
                throw section.error("name", .invalidValue(String(reflecting: name), reason: why))
            } catch {
                throw section.error("name", .invalidValue(String(reflecting: name), reason: "\(error)"))
            }
            deviceName = name
        }
    }

    private mutating func readStreams(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let count = try section.integer("max_per_user", in: ConfigurationLimits.streams) { maxStreamsPerUser = count }
        if let count = try section.integer("max_total", in: ConfigurationLimits.streams) { maxStreamsTotal = count }
        if let directory = try section.string("local_directory", meaning: "a directory path") {
            guard !directory.isEmpty else {
                streamsLocalDirectory = nil
                return
            }
            try Self.checkAbsolutePath(directory, key: "local_directory", in: section)
            streamsLocalDirectory = directory
        }
    }

    private mutating func readLog(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let text = try section.string("level") {
            guard let level = Logger.Level(rawValue: text) else {
                throw section.error(
                    "level",
                    .invalidValue(
                        "\"\(text)\"",
                        reason: "is not a log level; use one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            logLevel = level
        }
    }

    private mutating func readDBus(_ section: ConfigurationSection) throws(ConfigurationError) {
        if let text = try section.string("bus") {
            guard let bus = Self.busAddress(text) else {
                throw section.error(
                    "bus",
                    .invalidValue(
                        "\"\(text)\"",
                        reason: "is not a bus; use \"system\", \"session\" or a D-Bus address such as "
                            + "\"unix:path=/run/dbus/system_bus_socket\""))
            }
            self.bus = bus
        }
    }
}

// MARK: - Value syntax

extension DaemonConfiguration {
    /// "auto", "hciN" or a six-octet address; nil for anything else.
    static func adapterSelector(_ text: String) -> AdapterSelector? {
        if text == "auto" { return .automatic }
        if text.hasPrefix("hci"), text.count > 3, text.dropFirst(3).allSatisfy(\.isASCIIDigit) {
            return .name(text)
        }
        let octets = text.split(separator: ":", omittingEmptySubsequences: false)
        if octets.count == 6, octets.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) {
            return .address(text.uppercased())
        }
        return nil
    }

    /// Permission bits from one to four octal digits ("660", "0660"), at most 0777.
    static func octalMode(_ text: String) -> UInt16? {
        guard (1...4).contains(text.count), text.allSatisfy({ ("0"..."7").contains($0) }),
            let mode = UInt16(text, radix: 8), ConfigurationLimits.socketMode.contains(Int(mode))
        else { return nil }
        return mode
    }

    /// A group name as useradd and systemd-sysusers accept it, or a numeric GID.
    static func isValidGroupName(_ text: String) -> Bool {
        if text.allSatisfy(\.isASCIIDigit) { return text.count <= 10 }
        guard text.count <= 32, let first = text.unicodeScalars.first,
            first == "_" || ("a"..."z").contains(first) || ("A"..."Z").contains(first)
        else { return false }
        return text.unicodeScalars.allSatisfy { scalar in
            scalar == "_" || scalar == "-" || scalar == "." || ("a"..."z").contains(scalar)
                || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
        }
    }

    /// "system", "session", or a D-Bus server address list (`transport:key=value,…;…`).
    static func busAddress(_ text: String) -> DBusBusAddress? {
        switch text {
        case "system": return .system
        case "session": return .session
        default: break
        }
        let entries = text.split(separator: ";")
        guard !entries.isEmpty else { return nil }
        for entry in entries {
            guard let colon = entry.firstIndex(of: ":") else { return nil }
            let transport = entry[..<colon]
            guard !transport.isEmpty, transport.allSatisfy({ $0.isLetter || $0 == "-" }) else { return nil }
            let pairs = entry[entry.index(after: colon)...].split(separator: ",")
            guard pairs.allSatisfy({ $0.contains("=" as Character) && !$0.hasPrefix("=") }) else { return nil }
        }
        return .address(text)
    }

    private static func checkAbsolutePath(
        _ path: String, key: String, in section: ConfigurationSection
    ) throws(ConfigurationError) {
        guard path.hasPrefix("/"), !path.contains("\u{0}" as Character) else {
            throw section.error(key, .invalidValue("\"\(path)\"", reason: "is not an absolute path"))
        }
    }
}

extension Character {
    /// 0–9 only (`isNumber` also accepts other scripts' digits).
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
