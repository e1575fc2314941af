import BlueZSimulator
import DBus

/// The command line of `handoff-sim-bluez`, parsed by hand.
struct CommandLineOptions {
    var configuration = SimulatorConfiguration()
    var quiet = false
    var showHelp = false

    static let usage = """
        usage: handoff-sim-bluez [options]

        A simulated bluetoothd: owns org.bluez on a D-Bus bus with simulated LE
        adapters that hear each other's advertisements over a virtual air, and
        org.handoff.Simulator for fault injection (see docs/simulator.md).

        options:
          --bus ADDRESS             bus to own org.bluez on
                                    (default: $DBUS_SYSTEM_BUS_ADDRESS, else the system bus)
          --adapters N              adapters hci0…hci(N-1) (default 2)
          --supported-instances N   advertising instances per adapter (default 5, like btvirt)
          --rescan-interval SEC     scanners hear every advertisement again this often (default 10)
          --temporary-timeout SEC   devices not seen for this long are removed (default 30)
          --rssi DBM                RSSI of every report (default -55)
          --rssi-jitter DB          RSSI varies by up to this much (default 3)
          --latency-ms MIN[-MAX]    air latency per report (default 2-8)
          --no-rotate-on-update     keep the advertiser's address when its ManufacturerData changes
          --extended-advertising    controllers with LE extended advertising (most since
                                    Bluetooth 5): SupportedSecondaryChannels is offered and
                                    advertising works while scanning (default: legacy-only
                                    controllers, as btvirt -L and Bluetooth 4.x chips)
          -E, --experimental        offer bluetoothd's experimental interfaces, as
                                    bluetoothd -E: AdvertisementMonitorManager1 on
                                    every adapter (default: not offered, as 5.66)
          --length-error NAME       error for advertising data over 31 bytes
                                    (default org.bluez.Error.InvalidLength, as documented;
                                    org.bluez.Error.Failed is what bluetoothd 5.66 sends)
          --drop-rate FRACTION      lose this fraction of air reports (default 0)
          --name NAME               the adapters' system name (default handoff-sim)
          --att-mtu N               ATT MTU of every LE connection, 23-517 (default 517)
          --connect-timeout SEC     Device1.Connect gives up after this long without a
                                    connectable advertiser (default: never, as 5.66)
          --att-channels N          ATT bearers per connection, 1-5 (default 3: notifications
                                    may arrive out of order, as with EATT; 1: in order)
          --disconnect-delay SEC    Device1.Disconnect takes this long (default 2, as 5.66)
          --stall-discovery N       the first N LE links come up but their services never
                                    resolve (ServicesResolved stays false), as bluetoothd 5.66
                                    once did on the VM rig (default 0)
          --drop-link-after N       the first link that carries N notifications drops right
                                    after the Nth, as out of range mid-exchange (default: never)
          --killed-scan-linger SEC  after a restart that kills bluetoothd, the controllers it
                                    scanned on go on scanning this long: StartDiscovery
                                    fails with InProgress and broadcast advertising fails until
                                    then or a power-off (default 10.24, the kernel's LE
                                    discovery round; 0: the scan ends with bluetoothd)
          --quiet                   do not log events to stderr
          -h, --help                show this help

        It prints one line to stdout when ready, logs events to stderr, and exits 0
        on SIGTERM or SIGINT after calling Release on every advertisement.
        """

    /// An option that could not be used, with the message to print.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// Parses the arguments after the program name.
    static func parse(_ arguments: [String]) throws(Problem) -> CommandLineOptions {
        var options = CommandLineOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(Problem) -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else { throw Problem(description: "\(name) needs a value") }
                return next
            }
            func number<T: LosslessStringConvertible>(_: T.Type) throws(Problem) -> T {
                let text = try value()
                guard let number = T(text) else { throw Problem(description: "\(name): '\(text)' is not a number") }
                return number
            }
            func seconds() throws(Problem) -> Duration {
                let value = try number(Double.self)
                guard value > 0, value.isFinite else { throw Problem(description: "\(name) must be positive") }
                return .milliseconds(Int64((value * 1000).rounded()))
            }
            switch name {
            case "-h", "--help": options.showHelp = true
            case "--bus": options.configuration.bus = .address(try value())
            case "--adapters": options.configuration.adapterCount = try number(Int.self)
            case "--supported-instances": options.configuration.supportedInstances = try number(Int.self)
            case "--rescan-interval": options.configuration.rescanInterval = try seconds()
            case "--temporary-timeout": options.configuration.temporaryTimeout = try seconds()
            case "--rssi": options.configuration.rssi = try number(Int16.self)
            case "--rssi-jitter": options.configuration.rssiJitter = try number(Int16.self)
            case "--latency-ms":
                let text = try value()
                let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
                guard (1...2).contains(parts.count), let low = parts.first ?? nil, let high = parts.last ?? nil,
                    low >= 0, high >= low
                else { throw Problem(description: "--latency-ms: '\(text)' is not MIN or MIN-MAX milliseconds") }
                options.configuration.latency = .milliseconds(low) ... .milliseconds(high)
            case "--no-rotate-on-update": options.configuration.rotateOnUpdate = false
            case "--extended-advertising": options.configuration.legacyAdvertising = false
            case "-E", "--experimental": options.configuration.experimental = true
            case "--length-error": options.configuration.lengthErrorName = try value()
            case "--drop-rate": options.configuration.dropRate = try number(Double.self)
            case "--name": options.configuration.systemName = try value()
            case "--att-mtu": options.configuration.attMTU = try number(UInt16.self)
            case "--att-channels": options.configuration.attChannels = try number(Int.self)
            case "--connect-timeout": options.configuration.connectTimeout = try seconds()
            case "--stall-discovery": options.configuration.stalledDiscoveries = try number(Int.self)
            case "--drop-link-after": options.configuration.dropLinkAfterNotifications = try number(Int.self)
            case "--disconnect-delay", "--killed-scan-linger":
                let delay = try number(Double.self)
                guard delay >= 0, delay.isFinite else { throw Problem(description: "\(name) must not be negative") }
                let duration = Duration.milliseconds(Int64((delay * 1000).rounded()))
                if name == "--disconnect-delay" {
                    options.configuration.disconnectDelay = duration
                } else {
                    options.configuration.killedScanLinger = duration
                }
            case "--quiet": options.quiet = true
            default: throw Problem(description: "unknown option '\(argument)'")
            }
        }
        do { try options.configuration.validate() } catch { throw Problem(description: error.message) }
        return options
    }
}
