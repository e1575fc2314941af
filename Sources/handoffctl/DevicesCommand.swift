import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl devices`: `list` (the default) and `remove`.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the devices of your accounts, or remove one.",
        discussion: """
            Without a subcommand, lists them (the same as 'handoffctl devices list'). \
            'handoffctl devices remove NAME' locks a lost or sold device out of an account \
            (docs/devices.md, section 7).

            EXAMPLES
              handoffctl devices
              handoffctl devices --json
              handoffctl devices remove "Old ThinkPad"
            """,
        subcommands: [DevicesListCommand.self, DevicesRemoveCommand.self],
        defaultSubcommand: DevicesListCommand.self)

    static func render(_ devices: [DeviceInfo], now: Date) -> String {
        DevicesListCommand.render(devices, now: now)
    }
}

/// `handoffctl devices list`
struct DevicesListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List this laptop and the other devices of your accounts.",
        discussion: """
            Prints, for each account you may use, this laptop first and then every other device of \
            the account that this laptop has met (docs/devices.md):

              NAME         the device's name (on this laptop: [device] name in handoffd.toml, by
                           default the pretty hostname)
              ACCOUNT      the account the device shares with this laptop
              FINGERPRINT  its key fingerprint: lasting, the same wherever it is shown
              LAST HEARD   how long ago one of its beacons was heard, "nearby" while one of its
                           activities is, "this device" for this laptop, or "never"; followed
                           by "(new key pending)" while the account's new key, made when another
                           device was removed here, waits to be delivered to it

            Two devices meet the first time one hears the other's beacon: they exchange names over \
            Bluetooth, sealed under the account's key, so no one else learns them. A renamed device \
            is met again under its new name.

            With --json, prints the daemon's "devices" result unchanged as one JSON object (a device \
            still waiting for a new key has "newKeyPending": true).

            EXAMPLES
              handoffctl devices
              handoffctl devices --json
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the daemon's result as one JSON object.")
    var json = false

    func run() async throws {
        try await JSONOutput.printRead(.devices, json: json, on: try await connection.connect()) {
            Self.render(try await $0.devices().devices, now: Date())
        }
    }

    static func render(_ devices: [DeviceInfo], now: Date) -> String {
        guard !devices.isEmpty else { return "No accounts. Create one with: handoffctl pair" }
        var table = Table("NAME", "ACCOUNT", "FINGERPRINT", "LAST HEARD")
        for device in devices {
            var heard =
                if device.thisDevice { "this device" }
                else if device.nearby { "nearby" }
                else { device.lastHeard.map { RelativeTime.ago($0, now: now) } ?? "never" }
            if device.newKeyPending == true { heard += " (new key pending)" }
            table.append([
                Terminal.singleLine(device.name, limit: 32), Terminal.singleLine(device.account, limit: 24), device.fingerprint,
                heard,
            ])
        }
        return table.rendered
    }
}

/// `handoffctl devices remove`
struct DevicesRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Lock a lost or sold device out of an account.",
        discussion: """
            Makes a new key for the account at once: from now on this laptop advertises and \
            recognises under the new key, so the removed device sees none of its new activities. \
            Every other device of the account that this laptop has met gets the new key, sealed to \
            that device alone, the next time this laptop hears it nearby (over Bluetooth, within 14 \
            days); 'handoffctl devices' shows "(new key pending)" until then. A device that is not \
            heard within 14 days, or that this laptop never met, must be paired again \
            ('handoffctl pair'). Removing a second device of the same account has to wait until \
            the first removal has reached every device (or its 14 days are over).

            NAME is a device's name or fingerprint as 'handoffctl devices' shows it; with several \
            accounts that know the name, give the fingerprint and --account. This laptop cannot \
            remove itself: do it from another device of the account. See docs/devices.md, section 7.

            Asks for confirmation first, unless --yes is given; without a terminal to ask on, \
            --yes is required. With --json, prints the daemon's "devices.remove" result unchanged \
            as one JSON object.

            EXAMPLES
              handoffctl devices remove "Old ThinkPad"
              handoffctl devices remove 5d2e7a90c1b3f468 --account work --yes
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The device's name or fingerprint, as 'handoffctl devices' shows it.", valueName: "name"))
    var name: String

    @Option(help: ArgumentHelp("The account to remove it from.", valueName: "account"))
    var account: String?

    @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.")
    var yes = false

    @Flag(help: "Print the daemon's result as one JSON object.")
    var json = false

    func run() async throws {
        let connection = try await connection.connect()
        if !yes {
            guard Terminal.isInteractive else {
                throw CommandFailure("not removing \(name) without confirmation: run with --yes")
            }
            guard Terminal.confirm("Remove \(name) from \(account.map { "account \($0)" } ?? "your account")? It gets no new activities, and your other devices get a new key") else {
                throw CommandFailure("\(name) was not removed")
            }
        }
        if json {
            try await JSONOutput.printResult(
                of: .devicesRemove, DevicesRemoveParams(device: name, account: account), on: connection)
            return
        }
        Terminal.printLine(Self.render(try await connection.removeDevice(name, account: account)))
    }

    static func render(_ result: DevicesRemoveResult) -> String {
        let removed = Terminal.singleLine(result.removed.name, limit: 64)
        let account = Terminal.singleLine(result.account, limit: 64)
        var lines = [
            "Removed \(removed) (\(result.removed.fingerprint)) from account \(account).",
            "Account \(account) has a new key (fingerprint \(result.fingerprint)); \(removed) no longer sees its activities.",
        ]
        if result.pending.isEmpty {
            lines.append("No other device of the account was met here: pair your other devices again (handoffctl pair).")
        } else {
            for device in result.pending {
                lines.append(
                    "\(Terminal.singleLine(device.name, limit: 64)) (\(device.fingerprint)) gets the new key the next time it is nearby.")
            }
            let until = ISO8601DateFormatter.string(from: result.until, timeZone: .current, formatOptions: [.withFullDate])
            lines.append("Devices not nearby before \(until) must be paired again.")
        }
        return lines.joined(separator: "\n")
    }
}
