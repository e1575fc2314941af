import Foundation
import HandoffProtocol
import NIOCore
import NIOPosix
import Synchronization

/// One connection to handoffd over its Unix socket.
///
/// ```swift
/// let connection = try await HandoffConnection.connect()
/// try await connection.hello(app: "org.example.browser", handles: ["org.example.browser.viewing"])
/// let published = try await connection.publish(PublishParams(type: "org.example.browser.viewing", title: "Docs"))
/// ```
///
/// Requests may be sent from any number of tasks at once; each is matched to
/// its response by id. Events (after `subscribe`) arrive on `events`.
///
/// The activities a client publishes belong to its connection: closing it,
/// dropping the last reference to it, or exiting the process makes the daemon
/// invalidate them. A client that publishes keeps its connection open for as
/// long as the activities should stay visible.
public final class HandoffConnection: Sendable {
    /// Where handoffd listens unless told otherwise.
    public static let standardSocketPath = "/run/handoffd/handoffd.sock"
    /// The environment variable that overrides `standardSocketPath`.
    public static let socketPathEnvironmentVariable = "HANDOFF_SOCKET"
    /// How long a request waits for its answer unless the caller says otherwise.
    public static let defaultRequestTimeout: Duration = .seconds(10)

    /// The socket path to use: `HANDOFF_SOCKET` when it is set and not empty, else `standardSocketPath`.
    public static func defaultSocketPath(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let path = environment[socketPathEnvironmentVariable], !path.isEmpty { return path }
        return standardSocketPath
    }

    /// The path this connection was made to.
    public let socketPath: String
    /// How long each request waits for its answer; nil waits for ever.
    public let requestTimeout: Duration?
    /// The daemon's events, in order, until the connection closes (then the stream ends).
    ///
    /// An `AsyncStream` has one consumer: iterate it from one task only. Events
    /// are buffered until read.
    public var events: AsyncStream<HandoffEvent> { state.events }

    private let channel: any Channel
    let state: ConnectionState

    private init(socketPath: String, requestTimeout: Duration?, channel: any Channel, state: ConnectionState) {
        self.socketPath = socketPath
        self.requestTimeout = requestTimeout
        self.channel = channel
        self.state = state
    }

    deinit {
        channel.close(promise: nil)
    }

    /// Connects to handoffd.
    ///
    /// - Parameters:
    ///   - socketPath: the socket; nil means `defaultSocketPath()`.
    ///   - requestTimeout: how long each request waits for its answer (nil: for ever).
    ///   - eventLoopGroup: where the connection's I/O runs.
    /// - Throws: `HandoffClientError.daemonNotRunning`, `.permissionDenied` or `.connectFailed`.
    public static func connect(
        socketPath: String? = nil,
        requestTimeout: Duration? = defaultRequestTimeout,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> HandoffConnection {
        let path = socketPath ?? defaultSocketPath()
        let state = ConnectionState()
        let bootstrap = ClientBootstrap(group: eventLoopGroup)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FrameHandler(state: state))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(unixDomainSocketPath: path).get()
        } catch {
            throw HandoffClientError.connectFailure(error, socketPath: path)
        }
        return HandoffConnection(socketPath: path, requestTimeout: requestTimeout, channel: channel, state: state)
    }

    /// What the daemon answered to `hello`, once it has.
    public var helloResult: HelloResult? { state.helloResult }

    /// Whether the connection has closed (no request can succeed any more).
    public var isClosed: Bool { state.closeReason != nil }

    /// Closes the connection. The daemon invalidates this client's activities;
    /// requests still waiting fail with `.connectionClosed`.
    public func close() async {
        state.closed(because: .connectionClosed)
        try? await channel.close().get()
    }

    /// Returns when the connection has closed, from either side, or when the calling task is cancelled.
    public func waitUntilClosed() async {
        let waiter = CloseWaiter()
        channel.closeFuture.whenComplete { _ in waiter.release() }
        await withTaskCancellationHandler {
            await waiter.wait()
        } onCancel: {
            waiter.release()
        }
    }

    // MARK: Requests

    /// Sends one request and decodes its result as `R`.
    ///
    /// The request is checked against `ProtocolLimits.maximumLineLength` before
    /// it is sent. Any number of requests may be in flight; each waits for the
    /// response carrying its id.
    ///
    /// - Throws: `HandoffClientError` (`.protocolError` with the daemon's error,
    ///   `.connectionClosed`, `.timedOut`, `.invalidResponse`), or
    ///   `CancellationError` when the calling task is cancelled.
    public func request<P: Encodable & Sendable, R: Decodable & Sendable>(
        _ method: Method, _ params: P, as type: R.Type = R.self
    ) async throws -> R {
        try await request(method, params, as: type, onSuccess: nil)
    }

    /// `request`, with `onSuccess` run on the successful response line before this task
    /// resumes and before any later frame is handled (see `ConnectionState.Pending`).
    func request<P: Encodable & Sendable, R: Decodable & Sendable>(
        _ method: Method, _ params: P, as type: R.Type = R.self, onSuccess: (@Sendable (Data) -> Void)?
    ) async throws -> R {
        let line = try await send(method, params, onSuccess: onSuccess)
        do {
            return try WireFormat.resultValue(type, from: line)
        } catch {
            throw HandoffClientError.invalidResponse("the \"\(method.rawValue)\" result: \(WireFormat.describe(error))")
        }
    }

    /// Sends one request and returns the whole response line (without its newline).
    public func send<P: Encodable & Sendable>(_ method: Method, _ params: P) async throws -> Data {
        try await send(method, params, onSuccess: nil)
    }

    func send<P: Encodable & Sendable>(
        _ method: Method, _ params: P, onSuccess: (@Sendable (Data) -> Void)?
    ) async throws -> Data {
        // Encoded once to check it; again with its id once registered (encoding is deterministic).
        let length: Int
        do {
            length = try WireFormat.request(id: 0, method: method, params: params).count - 1
        } catch {
            throw HandoffClientError.protocolError(
                ProtocolError(.invalidParams, "cannot encode the \"\(method.rawValue)\" parameters: \(WireFormat.describe(error))"))
        }
        guard length + 20 <= ProtocolLimits.maximumLineLength else {
            throw HandoffClientError.protocolError(
                ProtocolError(
                    .lineTooLong,
                    "the \"\(method.rawValue)\" request is \(length) bytes; a request may be at most \(ProtocolLimits.maximumLineLength)"))
        }
        let state = self.state
        let channel = self.channel
        let timeout = requestTimeout
        let registered = Mutex<Int?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let registration = state.register(method: method, continuation: continuation, onSuccess: onSuccess) { id in
                    let frame = try WireFormat.request(id: id, method: method, params: params)
                    // `execute` only queues (never runs inline, even on the loop), so no
                    // channel callback can re-enter the state's lock, and frames leave in queue order.
                    channel.eventLoop.execute {
                        channel.writeAndFlush(ByteBuffer(bytes: frame)).whenFailure { _ in
                            state.fail(id, orClosedWith: .connectionClosed)
                        }
                    }
                }
                let id: Int
                switch registration {
                case .failure(let closed):
                    continuation.resume(throwing: closed)
                    return
                case .success(let registeredID):
                    id = registeredID
                }
                registered.withLock { $0 = id }
                if Task.isCancelled {
                    state.resolve(id, with: .failure(CancellationError()))
                    return
                }
                if let timeout {
                    let timer = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
                        state.resolve(id, with: .failure(HandoffClientError.timedOut(method, after: timeout)))
                    }
                    state.attach(timer, to: id)
                }
            }
        } onCancel: {
            if let id = registered.withLock({ $0 }) {
                state.resolve(id, with: .failure(CancellationError()))
            }
        }
    }

    /// Remembers the daemon's answer to `hello`.
    func recordHello(_ result: HelloResult) {
        state.helloResult = result
    }
}
