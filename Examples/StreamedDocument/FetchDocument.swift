import ArgumentParser
import Foundation
import HandoffKit

/// Laptop B: continue the document with a stream, fetch it, and tell laptop A what arrived.
struct FetchDocument: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Continue the document your other laptop serves, fetch it over a stream and write it to a file.",
        discussion: """
            Waits for a nearby activity of the document type that supports streams, continues it \
            with a stream, and asks for the document ROUNDS times on that one stream: each round \
            sends 'GET', reads 'LENGTH <n>' and n bytes, and sends 'GOT <n> <sha256>', which the \
            other laptop answers 'OK'. Writes the document to --out. Ends with a line \
            'RESULT bytes=… rounds=… continue_ms=… ttfb_ms=… kbit_s=… sha256=…' (the first round's \
            time to first byte and throughput; kbit/s counts 1000 bits).
            """)

    @OptionGroup var options: SocketOption

    @Option(help: "Where to write the document.")
    var out: String

    @Option(help: "How many times to ask for the document on the stream.")
    var rounds: Int = 2

    @Option(help: "Give up waiting for the activity after this many seconds.")
    var within: Double = 60

    @Option(help: "Read slowly: pause this many milliseconds after each 64 KiB of the document (0: read at once), to see back-pressure through both daemons.")
    var readPauseMs: Int = 0

    func run() async throws {
        let client = HandoffClient(app: Document.appName, handles: [Document.activityType], socketPath: options.socket)
        say("Waiting for a nearby \(Document.activityType) activity that supports streams…")
        let nearby = try await Self.waitForNearby(client, within: within)
        say("Continuing \(nearby.title ?? nearby.id) from device \(nearby.device)…")
        let started = ContinuousClock.now
        let (restored, streams) = try await client.continueWithStreams(nearby, timeout: .seconds(30))
        let opened = ContinuousClock.now - started
        let info = try restored.userInfo(as: DocumentInfo.self)
        say("Stream open to device \(streams.peerDevice) after \(Self.milliseconds(opened)) ms; \(info.name) has \(info.bytes) bytes")

        var reader = StreamReader(streams, pause: .milliseconds(readPauseMs))
        var first: (document: [UInt8], firstByte: Duration, transfer: Duration)?
        for round in 1...rounds {
            let asked = ContinuousClock.now
            try await streams.write(Array("GET\n".utf8))
            guard let header = try await reader.line(), header.hasPrefix("LENGTH "), let length = Int(header.dropFirst(7)),
                (0...Document.maximumBytes).contains(length)
            else { throw DocumentError(description: "round \(round): no LENGTH line") }
            let firstByte = ContinuousClock.now - asked
            let document = try await reader.bytes(length)
            let transfer = ContinuousClock.now - asked
            let digest = Document.sha256(document)
            try await streams.write(Array("GOT \(document.count) \(digest)\n".utf8))
            let verdict = try await reader.line()
            say("Round \(round): \(document.count) bytes, first byte after \(Self.milliseconds(firstByte)) ms, "
                + "\(Self.kilobits(document.count, transfer)) kbit/s, sha256 \(digest), origin says \(verdict ?? "nothing")")
            guard verdict == "OK" else { throw DocumentError(description: "round \(round): the origin did not confirm") }
            if let first, first.document != document {
                throw DocumentError(description: "round \(round): the document differs from round 1")
            }
            if first == nil {
                try Data(document).write(to: URL(fileURLWithPath: out))
                first = (document, firstByte, transfer)
            }
        }
        await streams.finish()
        guard try await reader.line() == nil else { throw DocumentError(description: "unexpected bytes after the last answer") }
        await streams.close()
        await client.close()
        if let first {
            say("Wrote \(first.document.count) bytes to \(out)")
            say("RESULT bytes=\(first.document.count) rounds=\(rounds) continue_ms=\(Self.milliseconds(opened)) "
                + "ttfb_ms=\(Self.milliseconds(first.firstByte)) kbit_s=\(Self.kilobits(first.document.count, first.transfer)) "
                + "sha256=\(Document.sha256(first.document))")
        }
    }

    /// The first nearby activity of the type that supports streams.
    static func waitForNearby(_ client: HandoffClient, within: Double) async throws -> NearbyActivity {
        try await withThrowingTaskGroup(of: NearbyActivity?.self) { group in
            group.addTask {
                for try await change in client.nearby(types: [Document.activityType]) {
                    if case .lost = change { continue }
                    if change.activity.supportsStreams { return change.activity }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(within))
                return nil
            }
            let found = try await group.next() ?? nil
            group.cancelAll()
            guard let found else { throw DocumentError(description: "no such activity within \(within) seconds") }
            return found
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    static func kilobits(_ bytes: Int, _ duration: Duration) -> Int {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return seconds > 0 ? Int(Double(bytes) * 8 / 1000 / seconds) : 0
    }
}
