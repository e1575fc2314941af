#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import HandoffProtocol
import Synchronization

/// A stand-in for handoffd on a temporary Unix socket, scripted per test: the
/// HandoffKit, handoffctl and agent tests' daemon.
///
/// Plain POSIX sockets, one thread per connection. Every request line goes to
/// `behavior` on its connection's thread, with a `FakeClient` to answer
/// through; every request is recorded.
public final class FakeDaemon: Sendable {
    public typealias Behavior = @Sendable (FakeRequest, FakeClient) -> Void

    public let socketPath: String
    private let listener: Int32
    private let behavior: Behavior
    private let record = Mutex(Record())

    private struct Record {
        public var requests: [FakeRequest] = []
        var clients: [FakeClient] = []
        var disconnects = 0
        var stopped = false
    }

    /// Requests received so far, on every connection, in order.
    public var requests: [FakeRequest] { record.withLock { $0.requests } }
    /// How many client connections have ended.
    public var disconnects: Int { record.withLock { $0.disconnects } }

    /// Answers `hello` and nothing else.
    public static let helloOnly: Behavior = { request, client in
        if request.method == .hello { client.answer(request, HelloResult(version: 1, daemon: "fake 1")) }
    }

    /// Starts listening on `socketPath` (by default a fresh one).
    public init(_ behavior: @escaping Behavior = FakeDaemon.helloOnly, socketPath: String = FakeDaemon.temporarySocketPath()) throws {
        self.socketPath = socketPath
        self.behavior = behavior
        listener = try UnixSocket.listen(at: socketPath)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Sends `frame` to every client still connected.
    public func broadcast(_ frame: Data) {
        for client in record.withLock({ $0.clients }) { client.send(frame) }
    }

    /// How many clients have connected so far.
    public var connections: Int { record.withLock { $0.clients.count } }

    /// Stops accepting and drops every client. Only the first call does anything: the
    /// accept thread closes the listener, and its descriptor number may be another
    /// socket's by the time of a second call.
    public func stop() {
        guard record.withLock({ state in
            defer { state.stopped = true }
            return !state.stopped
        }) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for client in record.withLock({ $0.clients }) { client.close() }
        unlink(socketPath)
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            let client = FakeClient(fd: fd)
            record.withLock { $0.clients.append(client) }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: FakeClient) {
        var lines = LineBuffer()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(client.fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            for item in lines.append(chunk[..<count]) {
                guard case .line(let bytes) = item else {
                    client.send(WireFormat.error(id: nil, ProtocolError(.lineTooLong, "too long")))
                    continue
                }
                let line = Data(bytes)
                var id: Int?
                do {
                    let header = try WireFormat.requestHeader(line, id: &id)
                    let request = FakeRequest(id: id, method: header.method, line: line)
                    record.withLock { $0.requests.append(request) }
                    behavior(request, client)
                } catch {
                    client.send(WireFormat.error(id: id, error))
                }
            }
        }
        client.release()
        record.withLock { $0.disconnects += 1 }
    }

    /// Waits (at most two seconds) until `condition` holds.
    public func waitUntil(_ condition: @Sendable (FakeDaemon) -> Bool) async throws {
        for _ in 0..<200 where !condition(self) {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    public static func temporarySocketPath() -> String {
        "/tmp/handoffkit-test-\(getpid())-\(UUID().uuidString.prefix(8)).sock"
    }
}

/// One request the fake daemon received.
public struct FakeRequest: Sendable {
    public var id: Int?
    public var method: HandoffProtocol.Method
    public var line: Data

    public init(id: Int?, method: HandoffProtocol.Method, line: Data) {
        self.id = id
        self.method = method
        self.line = line
    }

    public func params<P: Decodable>(_ type: P.Type) throws -> P {
        try WireFormat.params(type, from: line)
    }
}

/// One client connection of the fake daemon: how a behavior answers.
public final class FakeClient: Sendable {
    public let fd: Int32
    /// Whether the descriptor is released; writes hold the lock so frames never interleave.
    private let released = Mutex(false)

    init(fd: Int32) {
        self.fd = fd
    }

    /// Writes a whole frame (frames from different threads never interleave).
    public func send(_ frame: Data) {
        released.withLock { released in
            guard !released else { return }
            frame.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    // MSG_NOSIGNAL: a client that has gone is EPIPE here, not a SIGPIPE that ends the test
                    // process (it did once, in AgentNotificationTests, where nothing had ignored SIGPIPE yet).
                    let written = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                    if written < 0, errno == EINTR { continue }
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }

    public func send(raw text: String) {
        send(Data(text.utf8))
    }

    public func answer<R: Encodable>(_ request: FakeRequest, _ result: R) {
        send(try! WireFormat.result(id: request.id, result))
    }

    public func fail(_ request: FakeRequest, _ code: ErrorCode, _ message: String) {
        send(WireFormat.error(id: request.id, ProtocolError(code, message)))
    }

    public func event<D: Encodable>(_ name: EventName, _ data: D) {
        send(try! WireFormat.event(name, data))
    }

    /// Ends the connection (the client sees end of file).
    public func close() {
        released.withLock { released in
            if !released { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the descriptor once the connection's thread is done with it.
    public func release() {
        released.withLock { released in
            guard !released else { return }
            released = true
            Glibc.close(fd)
        }
    }
}

/// Plain POSIX Unix-socket helpers for the tests.
public enum UnixSocket {
    /// A listening socket bound to `path`.
    public static func listen(at path: String) throws -> Int32 {
        let fd = try bound(at: path)
        guard Glibc.listen(fd, 16) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return fd
    }

    /// A socket bound to `path` but not listening: connecting to it is refused,
    /// like a socket file a stopped daemon left behind.
    public static func bound(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
            for (index, byte) in bytes.enumerated() where index < sunPath.count - 1 { sunPath[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        return fd
    }
}

/// A nearby activity for tests.
public func sampleActivity(id: String = "n1", type: String? = "org.example.viewing", title: String? = "Docs") -> NearbyActivity {
    let date = Date(timeIntervalSince1970: 1_790_000_000)
    return NearbyActivity(
        id: id, account: "alice", device: "0a0b0c0d", type: type, typeHash: "deadbeef", title: title,
        hasPayload: true, hasWebpageURL: false, supportsStreams: false, rssi: -52, firstSeen: date, lastSeen: date)
}
