// Fuzz entry point for the socket protocol: the line splitter and request
// dispatch, driving a real `ClientGateway` over a real `HandoffDaemon` whose
// radio is a fake (nothing goes on any air) and whose accounts live in a
// scratch directory emptied after every input.
//
// - Fuzzing: `scripts/fuzz.sh` builds this with `-sanitize=fuzzer -DFUZZING`;
//   libFuzzer provides `main` and calls `LLVMFuzzerTestOneInput`.
// - Normal builds: `@main` below replays the files named on the command line.
#if canImport(Glibc)
import Glibc
#endif
import BlueZ
import Foundation
import HandoffDaemon
import HandoffProtocol
import Logging

/// A radio with no bluetoothd: it keeps what the daemon asks for, and hears nothing.
actor SilentRadio: Radio {
    nonisolated let scanEvents: ScanEvents
    nonisolated var bluez: BlueZContext? { nil }
    private var onAir: [RadioAdvertisement] = []
    init() { scanEvents = ScanEvents.makeStream().events }
    var status: RadioStatus {
        RadioStatus(phase: .ready("hci0"), adapter: "hci0", adapterAddress: "00:00:00:00:00:00", scanning: true, advertising: !onAir.isEmpty)
    }
    func advertise(_ advertisements: [RadioAdvertisement]) async { onAir = advertisements }
    func pauseDiscovery() async {}
    func resumeDiscovery() async {}
    func run() async {}
    func shutDown() async { onAir = [] }
}

enum ProtocolFuzz {
    static let directory: String = {
        let path = NSTemporaryDirectory() + "handoff-protocol-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()
    static let logger: Logger = {
        var logger = Logger(label: "protocol-fuzz")
        logger.logLevel = .critical
        return logger
    }()
    /// The uid each input's connection acts for, by its first byte: root, a user, another user.
    static let uids: [UInt32] = [0, 1000, 1001]

    /// Runs one input; traps (a finding) if an invariant breaks.
    static func run(_ input: [UInt8]) async {
        let (book, _) = AccountBook.load(directory: directory)
        let daemon = HandoffDaemon(settings: DaemonSettings(), radio: SilentRadio(), link: nil, accounts: book, logger: logger)
        let gateway = await ClientGateway(daemon: daemon, options: .init(), logger: logger)
        let uid = uids[Int(input.first ?? 0) % uids.count]
        guard case .success(let connection) = await gateway.open(uid: uid, pid: 1) else {
            preconditionFailure("the first connection was refused")
        }
        var lines = LineBuffer(maximumLength: 512)
        for item in lines.append(input.dropFirst()) {
            switch item {
            case .tooLong: connection.lineTooLong(limit: 512)
            case .line(let bytes): await connection.receive(bytes)
            }
            // Oracle 1: every line (and every over-long one) is answered by exactly one
            // frame, a single line of JSON that is a success or a failure, never an event.
            let queued = connection.outbox.count
            precondition(queued == 1, "\(queued) frames answered one line")
            guard let frame = await connection.outbox.next() else { preconditionFailure("outbox closed") }
            precondition(frame.last == 10 && !frame.dropLast().contains(10), "a frame is not one line")
            switch try? WireFormat.incoming(frame.dropLast()) {
            case .result?, .error?: break
            default: preconditionFailure("not a response: \(String(decoding: frame, as: UTF8.self))")
            }
        }
        await connection.close()
        // Oracle 2: the connection's end takes its activities with it.
        guard case .success(let observer) = await gateway.open(uid: 0, pid: 2) else {
            preconditionFailure("the observer was refused")
        }
        await observer.receive(Array("{\"id\":1,\"method\":\"hello\",\"params\":{\"app\":\"o\",\"versions\":[1]}}".utf8))
        await observer.receive(Array("{\"id\":2,\"method\":\"status\"}".utf8))
        _ = await observer.outbox.next()
        guard let frame = await observer.outbox.next(), case .result(_, let line)? = try? WireFormat.incoming(frame.dropLast()),
            let status = try? WireFormat.resultValue(StatusResult.self, from: line)
        else { preconditionFailure("status failed") }
        precondition(status.localActivityCount == 0, "activities outlived their connection")
        await observer.close()
        await daemon.shutDown()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
    }

    /// Runs `run` to its end from a thread outside the concurrency pool.
    static func runBlocking(_ input: [UInt8]) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await run(input)
            done.signal()
        }
        done.wait()
    }
}

/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    ProtocolFuzz.runBlocking(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if !FUZZING
/// Replays the files named on the command line through the fuzz function.
@main
struct ProtocolFuzzReplay {
    static func main() {
        let paths = CommandLine.arguments.dropFirst()
        if paths.isEmpty { print("usage: ProtocolFuzz FILE...  (replays inputs; build with scripts/fuzz.sh to fuzz)") }
        var failures = 0
        for path in paths {
            guard let bytes = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                failures += 1
                continue
            }
            ProtocolFuzz.runBlocking(Array(bytes))
            print("ok \(path) (\(bytes.count) bytes)")
        }
        exit(failures == 0 ? 0 : 1)
    }
}
#endif
