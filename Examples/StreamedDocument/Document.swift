// handoff-example-document: continuation streams with HandoffKit.
//
// On laptop A `serve FILE` publishes "reading FILE" with supportsContinuationStreams and
// answers requests on each stream a continuing laptop opens; on laptop B `fetch` continues
// it, asks for the document over the stream, writes it to a file and tells A what it got.
// See README.md in this folder for the exchange, line by line.
import ArgumentParser
import Crypto
import Foundation
import HandoffKit

@main
struct Document: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff-example-document",
        abstract: "A HandoffKit example: serve a document over a continuation stream, fetch it on your other laptop.",
        version: "handoff-example-document \(HandoffVersion.current)",
        subcommands: [ServeDocument.self, FetchDocument.self])

    /// The activity type this app publishes and continues.
    static let activityType = "org.handoff.example.document"
    /// The app's name in handoffd's logs.
    static let appName = "org.handoff.example.document"
    /// The largest document either side takes.
    static let maximumBytes = 64 << 20

    /// The SHA-256 of `bytes`, as lowercase hex.
    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }
}

/// What the app puts in userInfo.
struct DocumentInfo: Codable {
    var name: String
    var bytes: Int
}

/// Prints a line at once, also when the output is a pipe or a file.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A failure, printed as `Error: <message>` (exit status 1).
struct DocumentError: Error, CustomStringConvertible {
    var description: String
}

/// `--socket`, for both modes.
struct SocketOption: ParsableArguments {
    @Option(help: "handoffd's socket (default: $HANDOFF_SOCKET, else /run/handoffd/handoffd.sock).")
    var socket: String?
}
