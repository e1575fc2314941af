import ArgumentParser
import Foundation
import HandoffKit

/// Laptop A: publish a document and serve it on every continuation stream.
struct ServeDocument: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Publish FILE as the current activity, with continuation streams, and serve it on request.",
        discussion: """
            On each stream a continuing laptop opens, answers 'GET' with 'LENGTH <n>' and the \
            document, and checks each 'GOT <n> <sha256>' the other side sends back against the \
            document ('OK' or 'BAD'), until the other side finishes. Prints one line per request.
            """)

    @OptionGroup var options: SocketOption

    @Argument(help: "The document to serve.")
    var file: String

    @Option(help: "The title shown on your other laptops (default: the file's name).")
    var title: String?

    @Option(help: "Exit after serving this many streams (default: serve until interrupted).")
    var streams: Int?

    func run() async throws {
        let document = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        guard document.count <= Document.maximumBytes else {
            throw DocumentError(description: "\(file) is over \(Document.maximumBytes) bytes")
        }
        let name = URL(fileURLWithPath: file).lastPathComponent
        let client = HandoffClient(app: Document.appName, socketPath: options.socket)
        let activity = UserActivity(type: Document.activityType, client: client)
        activity.title = title ?? name
        try activity.setUserInfo(DocumentInfo(name: name, bytes: document.count))
        activity.supportsContinuationStreams = true
        try await activity.becomeCurrent()
        say("Serving \(name) (\(document.count) bytes, sha256 \(Document.sha256(document))) as \(Document.activityType)")

        let limit = streams
        try await withThrowingTaskGroup(of: Void.self) { group in
            var served = 0
            for await streams in activity.incomingStreams {
                say("Stream opened by device \(streams.peerDevice)")
                group.addTask { try await Self.serve(document, on: streams) }
                served += 1
                if let limit, served >= limit { break }
            }
            try await group.waitForAll()
        }
        await activity.invalidate()
        await client.close()
    }

    /// Answers one stream's requests until the other side finishes.
    static func serve(_ document: [UInt8], on streams: ContinuationStreams) async throws {
        defer { Task { await streams.close() } }
        let device = streams.peerDevice
        var reader = StreamReader(streams)
        var requests = 0
        while let request = try await reader.line() {
            requests += 1
            let words = request.split(separator: " ")
            switch words.first {
            case "GET":
                try await streams.write(Array("LENGTH \(document.count)\n".utf8))
                try await streams.write(document)
                say("\(device): GET answered with \(document.count) bytes")
            case "GOT" where words.count == 3:
                let matches = words[1] == "\(document.count)" && words[2] == Document.sha256(document)
                try await streams.write(Array((matches ? "OK\n" : "BAD\n").utf8))
                say("\(device): answer \(request.dropFirst(4)): \(matches ? "matches the document" : "DOES NOT MATCH")")
            default:
                try await streams.write(Array("BAD\n".utf8))
                say("\(device): unknown request \(request.prefix(40))")
            }
        }
        await streams.finish()
        say("\(device): finished after \(requests) requests")
    }
}
