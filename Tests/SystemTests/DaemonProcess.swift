#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation

/// A real `handoffd` process for one simulated laptop: its own config,
/// socket and accounts directory, on the shared private bus.
final class DaemonProcess: @unchecked Sendable {
    let name: String
    let directory: String
    let socket: String
    let configPath: String
    let logPath: String
    let process: TestProcess

    /// Starts handoffd and, unless `waitForSocket` is false, waits until its socket accepts connections.
    init(
        bus: PrivateBus, name: String, adapter: String, epochSeconds: Int = 600, expirySeconds: Int = 3,
        extraSocketSettings: String = "", extraBluetoothSettings: String = "", extraEnvironment: [String: String] = [:], waitForSocket: Bool = true,
        extraSections: String = ""
    ) async throws {
        self.name = name
        directory = "\(bus.directory)/\(name)"
        socket = "\(directory)/handoffd.sock"
        configPath = "\(directory)/handoffd.toml"
        logPath = "\(directory)/handoffd.log"
        try FileManager.default.createDirectory(atPath: "\(directory)/accounts", withIntermediateDirectories: true)
        // The simulator gives every advertisement a random address: connectable is private there.
        let advertisementType =
            extraBluetoothSettings.contains("advertisement_type") ? "" : #"advertisement_type = "peripheral""#
        // This host's kernel cannot be asked about LE privacy (it has no Bluetooth), so handoffd
        // relies on bluetoothd's main.conf: give it one that turns privacy on.
        var mainConf = ""
        if !extraBluetoothSettings.contains("bluetoothd_main_conf") {
            try "[General]\nPrivacy = device\n".write(toFile: "\(directory)/main.conf", atomically: true, encoding: .utf8)
            mainConf = #"bluetoothd_main_conf = "\#(directory)/main.conf""#
        }
        let config = """
            [bluetooth]
            adapter = "\(adapter)"
            \(advertisementType)
            \(mainConf)
            \(extraBluetoothSettings)

            [socket]
            path = "\(socket)"
            mode = "0666"
            group = ""
            \(extraSocketSettings)

            [accounts]
            directory = "\(directory)/accounts"

            [log]
            level = "debug"

            [dbus]
            bus = "\(bus.address)"

            \(extraSections)
            """
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { Glibc.close(log) }
        process = try TestProcess(
            try BuiltProducts.path(of: "handoffd"),
            ["--config", configPath, "--epoch-seconds", "\(epochSeconds)", "--expiry-seconds", "\(expirySeconds)"],
            environment: bus.environment.merging(extraEnvironment) { $1 }, stdout: log, stderr: log)
        guard waitForSocket else { return }
        try await eventually(within: .seconds(20)) { [socket, process] in
            guard process.isRunning else { throw TestFailure("handoffd \(name) exited during start-up") }
            return (try? WireClient(socket: socket)) != nil
        }
    }

    deinit { process.kill() }

    /// A connected client that has said hello.
    func client(handles: [String] = []) async throws -> WireClient {
        let client = try WireClient(socket: socket)
        try await client.hello(handles: handles)
        return client
    }

    /// The daemon's log so far (for failure messages and log assertions).
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Sends SIGTERM and returns the exit code (nil if it had to be killed).
    func terminate() async -> Int32? {
        process.signal(SIGTERM)
        let code = await process.exitCode(within: .seconds(10))
        if code == nil { process.kill() }
        return code
    }
}
