import ArgumentParser
import HandoffKit

/// `--socket`, on every command, and how commands reach the daemon.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .customLong("socket"),
        help: ArgumentHelp(
            "The daemon's socket (default: $HANDOFF_SOCKET, else /run/handoffd/handoffd.sock).",
            valueName: "path"),
        completion: .file())
    var socket: String?

    /// The socket path in effect.
    var socketPath: String { socket ?? HandoffConnection.defaultSocketPath() }

    /// Connects and says hello as `handoffctl`, declaring `handles` as the
    /// activity types this invocation understands (so the daemon can name them).
    /// With `pairingEvents`, it also hears `pairAnswered` (an answer given in the desktop agent).
    func connect(handles: [String] = [], pairingEvents: Bool = false) async throws -> HandoffConnection {
        let connection = try await HandoffConnection.connect(socketPath: socketPath)
        try await connection.hello(app: "handoffctl", handles: handles, pairingEvents: pairingEvents ? true : nil)
        return connection
    }
}
