import BlueZ
import DBus
import Logging
import Testing

@testable import HandoffDaemon

/// Parsing `handoffd.toml`: defaults, every key, and every kind of mistake.
@Suite struct ConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(text, source: "test.toml")
    }

    /// The error `text` produces; records an issue when it parses.
    private func failure(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigurationError? {
        do {
            let configuration = try parse(text)
            Issue.record("parsed without error: \(configuration)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    @Test func defaultsAreTheDocumentedValues() {
        let defaults = DaemonConfiguration.defaults
        #expect(defaults.adapter == .automatic)
        #expect(defaults.powerOnAdapter)
        #expect(defaults.companyID == 0xFFFF)
        #expect(defaults.advertisingIntervalMilliseconds == 100...150)
        #expect(defaults.advertisementType == nil)  // "auto"
        #expect(defaults.bluetoothdMainConf == "/etc/bluetooth/main.conf")
        #expect(defaults.epochSeconds == 600)
        #expect(defaults.nearbyExpiry == .seconds(45))
        #expect(defaults.nearbyRegistryCap == 256)
        #expect(defaults.socketPath == "/run/handoffd/handoffd.sock")
        #expect(defaults.socketMode == 0o660)
        #expect(defaults.socketGroup == "handoff")
        #expect(defaults.maxClients == 64)
        #expect(defaults.maxActivitiesPerClient == 16)
        #expect(defaults.maxLineBytes == 16384)
        #expect(defaults.accountsDirectory == "/var/lib/handoffd/accounts")
        #expect(defaults.logLevel == .info)
        #expect(defaults.bus == .system)
    }

    @Test func emptyTextAndEmptySectionsMeanDefaults() throws {
        #expect(try parse("") == .defaults)
        #expect(try parse("# nothing\n\n") == .defaults)
        let headers = ConfigurationSchema.sectionNames.map { "[\($0)]" }.joined(separator: "\n")
        #expect(try parse(headers) == .defaults)
    }

    @Test func everyKeyIsRead() throws {
        let text = """
            [bluetooth]
            adapter = "hci1"
            power_on = false
            company_id = 0x1234
            advertising_min_interval_ms = 200
            advertising_max_interval_ms = 400
            advertisement_type = "broadcast"

            [beacon]
            epoch_seconds = 300

            [nearby]
            expiry_seconds = 90
            registry_cap = 1000

            [socket]
            path = "/tmp/h/handoffd.sock"
            mode = "0600"
            group = "users"
            max_clients = 8
            max_activities_per_client = 4
            max_line_bytes = 65536

            [accounts]
            directory = "/srv/handoff/accounts"

            [log]
            level = "debug"

            [dbus]
            bus = "unix:path=/tmp/bus/socket"
            """
        var expected = DaemonConfiguration.defaults
        expected.adapter = .name("hci1")
        expected.powerOnAdapter = false
        expected.companyID = 0x1234
        expected.advertisingIntervalMilliseconds = 200...400
        expected.advertisementType = .broadcast
        expected.epochSeconds = 300
        expected.nearbyExpiry = .seconds(90)
        expected.nearbyRegistryCap = 1000
        expected.socketPath = "/tmp/h/handoffd.sock"
        expected.socketMode = 0o600
        expected.socketGroup = "users"
        expected.maxClients = 8
        expected.maxActivitiesPerClient = 4
        expected.maxLineBytes = 65536
        expected.accountsDirectory = "/srv/handoff/accounts"
        expected.logLevel = .debug
        expected.bus = .address("unix:path=/tmp/bus/socket")
        #expect(try parse(text) == expected)
    }

    @Test func oneKeyChangesOnlyItself() throws {
        var expected = DaemonConfiguration.defaults
        expected.epochSeconds = 60
        #expect(try parse("[beacon]\nepoch_seconds = 60\n") == expected)
    }

    @Test func epochsDownToFiveSecondsAreAccepted() throws {
        var expected = DaemonConfiguration.defaults
        expected.epochSeconds = 5
        #expect(try parse("[beacon]\nepoch_seconds = 5\n") == expected)
    }

    @Test(arguments: [
        ("auto", AdapterSelector.automatic),
        ("hci0", .name("hci0")),
        ("hci12", .name("hci12")),
        ("00:1a:7d:da:71:13", .address("00:1A:7D:DA:71:13")),
        ("00:1A:7D:DA:71:13", .address("00:1A:7D:DA:71:13")),
    ])
    func adapterForms(text: String, expected: AdapterSelector) throws {
        #expect(try parse("[bluetooth]\nadapter = \"\(text)\"").adapter == expected)
    }

    @Test(arguments: [("660", UInt16(0o660)), ("0660", 0o660), ("0600", 0o600), ("0777", 0o777), ("0", 0)])
    func socketModeIsOctal(text: String, expected: UInt16) throws {
        #expect(try parse("[socket]\nmode = \"\(text)\"").socketMode == expected)
    }

    @Test func emptyGroupLeavesTheGroupAlone() throws {
        #expect(try parse("[socket]\ngroup = \"\"").socketGroup == nil)
        #expect(try parse("[socket]\ngroup = \"1234\"").socketGroup == "1234")
    }

    @Test(arguments: Logger.Level.allCases)
    func everyLogLevel(level: Logger.Level) throws {
        #expect(try parse("[log]\nlevel = \"\(level.rawValue)\"").logLevel == level)
    }

    @Test func busForms() throws {
        #expect(try parse("[dbus]\nbus = \"system\"").bus == .system)
        #expect(try parse("[dbus]\nbus = \"session\"").bus == .session)
        let list = "unix:path=/tmp/a,guid=0123;tcp:host=localhost,port=1234"
        #expect(try parse("[dbus]\nbus = \"\(list)\"").bus == .address(list))
    }

    @Test func equalIntervalBoundsAreAllowed() throws {
        let text = "[bluetooth]\nadvertising_min_interval_ms = 150\nadvertising_max_interval_ms = 150"
        #expect(try parse(text).advertisingIntervalMilliseconds == 150...150)
    }

    // MARK: - Mistakes

    @Test func syntaxErrorHasLineAndColumn() throws {
        let error = try #require(failure("[socket]\nmode = \"0660\"\npath = = 3\n"))
        guard case .syntax(let message) = error.problem else {
            Issue.record("not a syntax error: \(error)")
            return
        }
        #expect(!message.isEmpty)
        #expect(error.line == 3)
        #expect(error.column != nil)
        #expect(error.description.hasPrefix("test.toml:3:"))
        #expect(error.description.contains("invalid TOML"))
    }

    @Test func duplicateKeyIsASyntaxError() throws {
        let error = try #require(failure("[log]\nlevel = \"info\"\nlevel = \"debug\"\n"))
        guard case .syntax = error.problem else {
            Issue.record("not a syntax error: \(error)")
            return
        }
        #expect(error.line == 3)
    }

    @Test func unknownSectionListsTheKnownOnes() throws {
        let error = try #require(failure("[log]\nlevel = \"info\"\n\n[blutooth]\nadapter = \"auto\"\n"))
        #expect(error.problem == .unknownSection("blutooth", known: ConfigurationSchema.sectionNames))
        #expect(error.line == 4)
        #expect(
            error.description
                == "test.toml:4: unknown section [blutooth]; the sections are [bluetooth], [beacon], [nearby], "
                + "[scan], [socket], [accounts], [device], [streams], [log], [dbus]")
    }

    @Test func unknownKeyListsTheSectionsKeys() throws {
        let error = try #require(failure("[socket]\npath = \"/run/x.sock\"\nmod = \"0660\"\n"))
        #expect(error.section == "socket")
        #expect(error.line == 3)
        #expect(
            error.description
                == "test.toml:3: unknown key \"mod\" in [socket]; its keys are path, mode, group, max_clients, "
                + "max_activities_per_client, max_line_bytes")
    }

    @Test func keyOutsideAnySectionSuggestsWhereItBelongs() throws {
        let error = try #require(failure("level = \"debug\"\n"))
        #expect(error.problem == .unknownKey("level", known: ConfigurationSchema.sectionNames))
        #expect(error.description == "test.toml:1: \"level\" is outside any section; did you mean to put it under [log]?")
        let other = try #require(failure("colour = \"blue\"\n"))
        #expect(other.description.contains("settings belong in one of the sections [bluetooth]"))
    }

    @Test func sectionThatIsNotATable() throws {
        let error = try #require(failure("log = \"debug\"\n"))
        #expect(error.section == "log")
        #expect(error.problem == .wrongType(expected: "a section", found: "a string (\"debug\")"))
    }

    @Test func nestedTableInASectionIsAnUnknownKey() throws {
        let error = try #require(failure("[socket.extra]\nx = 1\n"))
        #expect(error.problem == .unknownKey("extra", known: ConfigurationSchema.keys(of: "socket")!))
    }

    @Test(arguments: [
        ("bluetooth", "adapter", "1", "a string (\"auto\", \"hci0\" or an adapter address)", "an integer (1)"),
        ("bluetooth", "power_on", "\"yes\"", "true or false", "a string (\"yes\")"),
        ("bluetooth", "company_id", "\"0xFFFF\"", "an integer", "a string (\"0xFFFF\")"),
        ("bluetooth", "advertising_min_interval_ms", "100.5", "an integer", "a floating-point number (100.5)"),
        ("bluetooth", "advertising_max_interval_ms", "true", "an integer", "a boolean (true)"),
        ("beacon", "epoch_seconds", "[600]", "an integer", "an array"),
        ("nearby", "expiry_seconds", "\"45\"", "an integer", "a string (\"45\")"),
        ("nearby", "registry_cap", "{ n = 1 }", "an integer", "a table"),
        ("socket", "path", "5", "a string", "an integer (5)"),
        ("socket", "mode", "0o660", "a quoted octal string such as \"0660\"", "an integer (432)"),
        ("socket", "group", "100", "a string", "an integer (100)"),
        ("socket", "max_clients", "\"64\"", "an integer", "a string (\"64\")"),
        ("socket", "max_activities_per_client", "false", "an integer", "a boolean (false)"),
        ("socket", "max_line_bytes", "1e4", "an integer", "a floating-point number (10000.0)"),
        ("accounts", "directory", "[]", "a string", "an array"),
        ("log", "level", "3", "a string", "an integer (3)"),
        ("dbus", "bus", "1979-05-27", "a string", "a date"),
    ])
    func wrongType(section: String, key: String, value: String, expected: String, found: String) throws {
        let error = try #require(failure("[\(section)]\n\(key) = \(value)\n"))
        #expect(error.section == section)
        #expect(error.key == key)
        #expect(error.line == 2)
        #expect(error.problem == .wrongType(expected: expected, found: found))
        #expect(error.description == "test.toml:2: [\(section)] \(key): expected \(expected), found \(found)")
    }

    @Test(arguments: [
        ("bluetooth", "company_id", 0, 1...0xFFFF),
        ("bluetooth", "company_id", 0x10000, 1...0xFFFF),
        ("bluetooth", "advertising_min_interval_ms", 19, 20...10_485_000),
        ("bluetooth", "advertising_max_interval_ms", 10_485_001, 20...10_485_000),
        ("beacon", "epoch_seconds", 4, 5...86_400),
        ("beacon", "epoch_seconds", 86_401, 5...86_400),
        ("nearby", "expiry_seconds", 14, 15...86_400),
        ("nearby", "registry_cap", 0, 1...100_000),
        ("nearby", "registry_cap", 100_001, 1...100_000),
        ("socket", "max_clients", 0, 1...10_000),
        ("socket", "max_activities_per_client", -1, 1...10_000),
        ("socket", "max_line_bytes", 100, 8192...1_048_576),
        ("socket", "max_line_bytes", 1_048_577, 8192...1_048_576),
    ])
    func outOfRange(section: String, key: String, value: Int, allowed: ClosedRange<Int>) throws {
        let error = try #require(failure("[\(section)]\n\n\(key) = \(value)\n"))
        #expect(error.section == section)
        #expect(error.key == key)
        #expect(error.line == 3)
        #expect(error.problem == .outOfRange(value: value, allowed: allowed))
        #expect(
            error.description
                == "test.toml:3: [\(section)] \(key): \(value) is out of range; it must be between "
                + "\(allowed.lowerBound) and \(allowed.upperBound)")
    }

    @Test(arguments: [
        ("bluetooth", "adapter", "\"\""),
        ("bluetooth", "adapter", "\"hci\""),
        ("bluetooth", "adapter", "\"hci0x\""),
        ("bluetooth", "adapter", "\"bluetooth0\""),
        ("bluetooth", "adapter", "\"00:11:22:33:44\""),
        ("bluetooth", "adapter", "\"00:11:22:33:44:GG\""),
        ("socket", "path", "\"run/handoffd.sock\""),
        ("socket", "path", "\"/run/handoffd/\""),
        ("socket", "path", "\"/\(String(repeating: "x", count: 107))\""),
        ("socket", "mode", "\"\""),
        ("socket", "mode", "\"0999\""),
        ("socket", "mode", "\"0o660\""),
        ("socket", "mode", "\"1777\""),
        ("socket", "mode", "\"00660\""),
        ("socket", "mode", "\"rw-rw----\""),
        ("socket", "group", "\"bad group\""),
        ("socket", "group", "\"-dash\""),
        ("socket", "group", "\"\(String(repeating: "g", count: 33))\""),
        ("accounts", "directory", "\"accounts\""),
        ("accounts", "directory", "\"\""),
        ("log", "level", "\"verbose\""),
        ("log", "level", "\"INFO\""),
        ("dbus", "bus", "\"\""),
        ("dbus", "bus", "\"System\""),
        ("dbus", "bus", "\"/run/dbus/system_bus_socket\""),
        ("dbus", "bus", "\"unix:/run/dbus/system_bus_socket\""),
    ])
    func invalidValue(section: String, key: String, value: String) throws {
        let error = try #require(failure("[\(section)]\n\(key) = \(value)\n"))
        #expect(error.section == section)
        #expect(error.key == key)
        #expect(error.line == 2)
        guard case .invalidValue(_, let reason) = error.problem else {
            Issue.record("not an invalid value: \(error)")
            return
        }
        #expect(!reason.isEmpty)
        #expect(error.description.hasPrefix("test.toml:2: [\(section)] \(key): "))
    }

    @Test func invalidValueMessagesSayWhatToWrite() throws {
        let mode = try #require(failure("[socket]\nmode = \"0999\"\n"))
        #expect(
            mode.description
                == "test.toml:2: [socket] mode: \"0999\" is not an octal permission mode between \"0000\" and \"0777\" "
                + "(such as \"0660\")")
        let level = try #require(failure("[log]\nlevel = \"verbose\"\n"))
        #expect(
            level.description
                == "test.toml:2: [log] level: \"verbose\" is not a log level; use one of trace, debug, info, notice, "
                + "warning, error, critical")
        let type = try #require(failure("[bluetooth]\nadvertisement_type = \"connectable\"\n"))
        #expect(
            type.description
                == "test.toml:2: [bluetooth] advertisement_type: \"connectable\" is not an advertisement type; use "
                + "\"auto\" (connectable only with bluetoothd's LE privacy on), \"peripheral\" (connectable, needed "
                + "to continue activities from this device) or \"broadcast\"")
        let auto = try DaemonConfiguration.parse("[bluetooth]\nadvertisement_type = \"auto\"\n", source: "test.toml")
        #expect(auto.advertisementType == nil)
        let relative = try #require(failure("[bluetooth]\nbluetoothd_main_conf = \"main.conf\"\n"))
        #expect(relative.key == "bluetoothd_main_conf")
    }

    @Test func minimumIntervalAboveMaximumIsRejected() throws {
        let both = try #require(
            failure("[bluetooth]\nadvertising_min_interval_ms = 300\nadvertising_max_interval_ms = 200\n"))
        #expect(both.key == "advertising_min_interval_ms")
        #expect(both.line == 2)
        #expect(both.description.contains("300 ms is more than advertising_max_interval_ms (200 ms)"))
        // Raising only the minimum past the default maximum is caught too.
        let onlyMinimum = try #require(failure("[bluetooth]\nadvertising_min_interval_ms = 200\n"))
        #expect(onlyMinimum.key == "advertising_min_interval_ms")
        // Lowering only the maximum below the default minimum names the maximum.
        let onlyMaximum = try #require(failure("[bluetooth]\nadvertising_max_interval_ms = 50\n"))
        #expect(onlyMaximum.key == "advertising_max_interval_ms")
    }

    @Test func unknownKeysAreReportedBeforeBadValues() throws {
        let error = try #require(failure("[log]\nlevel = \"loud\"\n[socket]\ncolour = 1\n"))
        #expect(error.problem == .unknownKey("colour", known: ConfigurationSchema.keys(of: "socket")!))
    }

    @Test func quotedKeysAndHeadersStillGetLines() throws {
        let error = try #require(failure("[\"socket\"]\n\"mode\" = \"9\"\n"))
        #expect(error.line == 2)
        #expect(error.key == "mode")
    }
}

/// `[streams]`: the bounds on open continuation streams and the choice of transport.
@Suite struct StreamsConfigurationTests {
    @Test func defaultsUseL2CAPWithFourPerUserAndSixteenInAll() throws {
        let configuration = try DaemonConfiguration.parse("", source: "test.toml")
        #expect(configuration.maxStreamsPerUser == 4)
        #expect(configuration.maxStreamsTotal == 16)
        #expect(configuration.streamsLocalDirectory == nil)
        let settings = HandoffService.settings(configuration)
        #expect(settings.maxStreamsPerUser == 4 && settings.maxStreamsTotal == 16 && settings.streamsLocalDirectory == nil)
    }

    @Test func everyKeyIsRead() throws {
        let configuration = try DaemonConfiguration.parse(
            "[streams]\nmax_per_user = 2\nmax_total = 3\nlocal_directory = \"/tmp/streams\"\n", source: "test.toml")
        #expect(configuration.maxStreamsPerUser == 2)
        #expect(configuration.maxStreamsTotal == 3)
        #expect(configuration.streamsLocalDirectory == "/tmp/streams")
        #expect(HandoffService.settings(configuration).streamsLocalDirectory == "/tmp/streams")
    }

    @Test func aRelativeDirectoryOrAZeroBoundIsAnError() {
        #expect(throws: ConfigurationError.self) {
            _ = try DaemonConfiguration.parse("[streams]\nlocal_directory = \"streams\"\n", source: "test.toml")
        }
        #expect(throws: ConfigurationError.self) {
            _ = try DaemonConfiguration.parse("[streams]\nmax_total = 0\n", source: "test.toml")
        }
    }
}
