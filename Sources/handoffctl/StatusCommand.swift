import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl status`
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what the daemon and the Bluetooth radio are doing.",
        discussion: """
            Prints the daemon's state as you may see it: the adapter in use, what the radio is \
            doing, whether it scans and advertises, whether activities published here can be \
            continued on other devices (LE address privacy) and how to fix it, your accounts, how many nearby activities, \
            clients and published activities there are, the beacon counters, the scan reports the \
            daemon lost (it fell behind, or bluetoothd reported devices it had not announced), and the last radio error.

            With --json, prints the daemon's "status" result unchanged as one JSON object.

            EXAMPLES
              handoffctl status
              handoffctl status --json | jq .scanning
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the daemon's result as one JSON object.")
    var json = false

    func run() async throws {
        try await JSONOutput.printRead(.status, json: json, on: try await connection.connect()) {
            Self.render(try await $0.status())
        }
    }

    /// `available (LE privacy on, hci0)`, or `unavailable: why; fix: how`.
    static func continuation(_ availability: ContinuationAvailability?) -> String {
        guard let availability else { return "not reported (handoffd predates the check)" }
        let reason = Terminal.singleLine(availability.reason, limit: 300)
        if availability.isAvailable { return "available (\(reason))" }
        let state = availability.state == ContinuationAvailability.unavailable ? "unavailable" : "unknown"
        let fix = availability.fix.map { "; fix: " + Terminal.singleLine($0, limit: 300) } ?? ""
        return "\(state): \(reason)\(fix)"
    }

    /// `none`, or how many reports the daemon lost (it fell behind, or the device was not announced).
    static func dropped(_ count: UInt64) -> String {
        count == 0 ? "none" : "\(count) report(s) lost: the daemon fell behind the radio or heard unannounced devices (see its log)"
    }

    /// Aligned `key: value` lines.
    static func render(_ status: StatusResult) -> String {
        var adapter = status.adapter ?? "none"
        if status.adapter != nil, let address = status.adapterAddress { adapter += " (\(address))" }
        var published = "\(status.localActivityCount)"
        if let current = status.currentActivityType { published += " (current: \(current))" }
        var beacons = "\(status.beaconsRecognized) recognized, \(status.beaconsRejected) rejected"
        if let copies = status.beaconCopiesRefused { beacons += ", \(copies) copies refused" }
        let lines: [(String, String)] = [
            ("daemon", status.daemon),
            ("device", status.deviceName.map { "\(Terminal.singleLine($0, limit: 64)) (key \(status.deviceFingerprint ?? "?"))" } ?? "unnamed (handoffd predates device names)"),
            ("adapter", adapter),
            ("radio", status.radio),
            ("scanning", (status.scanning ? "yes" : "no") + (status.scanPath.map { " (\($0))" } ?? "")),
            ("advertising", status.advertising ? "yes" : "no"),
            ("continuation", continuation(status.continuation)),
            ("accounts", status.accounts.isEmpty ? "none" : status.accounts.joined(separator: ", ")),
            ("nearby", "\(status.nearbyCount)"),
            ("clients", "\(status.clientCount)"),
            ("published", published),
            ("rotation", "every \(status.epochSeconds) s"),
            ("beacons", beacons),
            ("scan drops", status.scanReportsDropped.map(dropped) ?? "not reported (handoffd predates the count)"),
            ("last error", status.lastError.map { Terminal.singleLine($0, limit: 200) } ?? "none"),
        ]
        let width = (lines.map(\.0.count).max() ?? 0) + 1
        return lines.map { key, value in
            "\(key):".padding(toLength: width, withPad: " ", startingAt: 0) + " " + value
        }.joined(separator: "\n")
    }
}
