// handoff-example-viewer: a small app that uses HandoffKit the way a browser would.
//
// On laptop A it publishes "viewing URL X" as the current activity; on laptop B it
// declares the activity type, continues A's activity and prints what it restored.
// See README.md in this folder for a walk-through on two laptops.
import ArgumentParser
import Foundation
import HandoffKit

@main
struct Viewer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff-example-viewer",
        abstract: "A HandoffKit example: publish the URL you view, continue it on your other laptop.",
        version: "handoff-example-viewer \(HandoffVersion.current)",
        subcommands: [PublishURL.self, ContinueURL.self])

    /// The activity type this app publishes and continues (its NSUserActivityTypes).
    static let activityType = "org.handoff.example.viewing"
    /// The app's name in handoffd's logs.
    static let appName = "org.handoff.example.viewer"
}

/// What the app puts in userInfo: its own Codable state.
struct Viewing: Codable {
    var url: String
    var scroll: Double
}

/// Prints a line at once, also when the output is a pipe or a file.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A failure, printed as `Error: <message>` (exit status 1).
struct ViewerError: Error, CustomStringConvertible {
    var description: String
}

/// `--socket`, for both modes.
struct SocketOption: ParsableArguments {
    @Option(help: "handoffd's socket (default: $HANDOFF_SOCKET, else /run/handoffd/handoffd.sock).")
    var socket: String?
}
