import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl devices`
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List this laptop and the other devices of your accounts.",
        discussion: """
            Prints, for each account you may use, this laptop first and then every other device of \
            the account that this laptop has met (docs/devices.md):

              NAME         the device's name (on this laptop: [device] name in handoffd.toml, by
                           default the pretty hostname)
              ACCOUNT      the account the device shares with this laptop
              FINGERPRINT  its key fingerprint: lasting, the same wherever it is shown
              LAST HEARD   how long ago one of its beacons was heard, "nearby" while one of its
                           activities is, "this device" for this laptop, or "never"

            Two devices meet the first time one hears the other's beacon: they exchange names over \
            Bluetooth, sealed under the account's key, so no one else learns them. A renamed device \
            is met again under its new name.

            With --json, prints the daemon's "devices" result unchanged as one JSON object.

            EXAMPLES
              handoffctl devices
              handoffctl devices --json
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the daemon's result as one JSON object.")
    var json = false

    func run() async throws {
        let connection = try await connection.connect()
        if json {
            try await JSONOutput.printResult(of: .devices, EmptyParams(), on: connection)
            return
        }
        Terminal.printLine(Self.render(try await connection.devices().devices, now: Date()))
    }

    static func render(_ devices: [DeviceInfo], now: Date) -> String {
        guard !devices.isEmpty else { return "No accounts. Create one with: handoffctl pair" }
        var table = Table("NAME", "ACCOUNT", "FINGERPRINT", "LAST HEARD")
        for device in devices {
            let heard =
                if device.thisDevice { "this device" }
                else if device.nearby { "nearby" }
                else { device.lastHeard.map { RelativeTime.ago($0, now: now) } ?? "never" }
            table.append([
                Terminal.singleLine(device.name, limit: 32), Terminal.singleLine(device.account, limit: 24), device.fingerprint,
                heard,
            ])
        }
        return table.rendered
    }
}
