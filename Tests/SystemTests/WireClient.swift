#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import HandoffProtocol

/// A deliberately plain client for the handoffd socket: POSIX calls and
/// WireFormat, nothing from HandoffKit, so these tests check the daemon
/// against the protocol rather than against our own client library.
final class WireClient: @unchecked Sendable {
    let fd: Int32
    private let lock = NSLock()
    private var buffer = [UInt8]()
    private var nextID = 0

    /// Connects to `path`. The descriptor is stored only once connected: a class whose
    /// initializer throws after every property is set still runs `deinit`, which would
    /// close the descriptor a second time, and by then its number may be another
    /// socket's (a HandoffKit connection being made on another thread, say).
    init(socket path: String) throws {
        let fd = try UnixStreamSocket.connect(to: path)
        self.fd = fd
    }

    /// Takes over a connected socket (one a child process of another uid connected, say).
    init(connected fd: Int32) { self.fd = fd }

    deinit { Glibc.close(fd) }

    func close() { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    /// Sends raw bytes (for malformed-input tests).
    func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw TestFailure("write failed: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    /// Reads one line, waiting at most `timeout`. It never blocks a thread: the
    /// socket is polled without waiting and the task sleeps briefly in between,
    /// so many tests can wait at once on a two-core machine.
    func readLine(timeout: Duration = .seconds(10)) async throws -> Data {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw TestFailure("no line from handoffd within \(timeout)") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 0) > 0 else {
                try await Task.sleep(for: .milliseconds(2))
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = read(fd, &chunk, chunk.count)
            guard n > 0 else { throw TestFailure("handoffd closed the connection") }
            buffer += chunk[0..<n]
        }
    }

    /// Sends a request and returns the matching response line (events before it are kept for `nextEvent`).
    @discardableResult
    func request<P: Encodable>(_ method: HandoffProtocol.Method, _ params: P) async throws -> WireFormat.Incoming {
        nextID += 1
        let id = nextID
        try sendRaw(Array(try WireFormat.request(id: id, method: method, params: params)))
        while true {
            let line = try await readLine()
            let incoming = try WireFormat.incoming(line)
            switch incoming {
            case .result(let rid, _) where rid == id: return incoming
            case .error(let rid, _) where rid == id || rid == nil: return incoming
            case .event: pendingEvents.append(incoming)
            default: continue
            }
        }
    }

    private var pendingEvents: [WireFormat.Incoming] = []

    /// The next event, from those already read or from the socket.
    func nextEvent(timeout: Duration = .seconds(10)) async throws -> (EventName, NearbyActivity) {
        let incoming = pendingEvents.isEmpty ? try WireFormat.incoming(try await readLine(timeout: timeout)) : pendingEvents.removeFirst()
        guard case .event(let name, let line) = incoming else { throw TestFailure("expected an event, got \(incoming)") }
        return (name, try WireFormat.eventData(NearbyEvent.self, from: line).activity)
    }

    /// The events `event(_:as:timeout:)` skipped, in order.
    private(set) var skippedEvents: [EventName] = []

    /// The next event called `name`, decoded as `type`; other events before it are skipped (and listed in
    /// `skippedEvents`).
    func event<D: Decodable>(_ name: EventName, as type: D.Type, timeout: Duration = .seconds(10)) async throws -> D {
        let deadline = ContinuousClock.now + timeout
        while true {
            let incoming: WireFormat.Incoming
            if pendingEvents.isEmpty {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { throw TestFailure("no \(name.rawValue) event within \(timeout)") }
                incoming = try WireFormat.incoming(try await readLine(timeout: remaining))
            } else {
                incoming = pendingEvents.removeFirst()
            }
            if case .event(let got, let line) = incoming {
                if got == name { return try WireFormat.eventData(D.self, from: line) }
                skippedEvents.append(got)
            }
        }
    }

    /// The next event whose name is in `names`, with its frame; other events before it are skipped.
    func event(among names: Set<EventName>, timeout: Duration = .seconds(10)) async throws -> (EventName, Data) {
        let deadline = ContinuousClock.now + timeout
        while true {
            let incoming: WireFormat.Incoming
            if pendingEvents.isEmpty {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { throw TestFailure("none of \(names) within \(timeout)") }
                incoming = try WireFormat.incoming(try await readLine(timeout: remaining))
            } else {
                incoming = pendingEvents.removeFirst()
            }
            if case .event(let got, let line) = incoming {
                if names.contains(got) { return (got, line) }
                skippedEvents.append(got)
            }
        }
    }

    /// The data of the next event named `name`, from those already read or from the socket;
    /// other events are kept. Nil when none comes within `timeout`.
    func event(_ name: EventName, timeout: Duration = .seconds(10)) async throws -> Data? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let index = pendingEvents.firstIndex(where: { if case .event(name, _) = $0 { true } else { false } }),
                case .event(_, let line) = pendingEvents.remove(at: index)
            {
                return line
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero, let line = try? await readLine(timeout: left) else { return nil }
            pendingEvents.append(try WireFormat.incoming(line))
        }
    }

    /// Sends a request and decodes its result, failing on an error response.
    func call<P: Encodable, R: Decodable>(_ method: HandoffProtocol.Method, _ params: P, as type: R.Type) async throws -> R {
        switch try await request(method, params) {
        case .result(_, let line): return try WireFormat.resultValue(R.self, from: line)
        case .error(_, let error): throw error
        case .event, .unknownEvent: throw TestFailure("unexpected event")
        }
    }

    /// Sends a request that must fail, and returns its error.
    func failure<P: Encodable>(_ method: HandoffProtocol.Method, _ params: P) async throws -> ProtocolError {
        switch try await request(method, params) {
        case .error(_, let error): return error
        case let other: throw TestFailure("expected an error, got \(other)")
        }
    }

    func hello(handles: [String] = []) async throws {
        _ = try await call(.hello, HelloParams(app: "system-test", handles: handles), as: HelloResult.self)
    }
}
