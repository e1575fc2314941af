import ServiceLifecycle

/// One long-running part of handoffd as a swift-service-lifecycle `Service`.
///
/// `body` runs until it is cancelled; at graceful shutdown it is cancelled,
/// and then `stop` runs (not cancelled itself, so that it can still talk to
/// bluetoothd and to clients). The `ServiceGroup` shuts the parts down in the
/// reverse of the order they were listed in.
struct PartService: Service, CustomStringConvertible {
    let description: String
    let body: @Sendable () async throws -> Void
    let stop: @Sendable () async -> Void

    init(
        _ name: String, body: @escaping @Sendable () async throws -> Void,
        stop: @escaping @Sendable () async -> Void = {}
    ) {
        description = name
        self.body = body
        self.stop = stop
    }

    /// A part that only waits, so that its `stop` runs in its turn.
    static func waiting(_ name: String, stop: @escaping @Sendable () async -> Void) -> PartService {
        PartService(name, body: { try? await idle() }, stop: stop)
    }

    /// Waits until cancelled: what a part whose work is done does (a part that returns shuts the group down).
    static func idle() async throws { try await Task.sleep(for: .seconds(1 << 40)) }

    func run() async throws {
        let task = Task { try await body() }
        let result = await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await task.result
            } onGracefulShutdown: {
                task.cancel()
            }
        } onCancel: {
            task.cancel()
        }
        await stop()
        if case .failure(let error) = result, !(error is CancellationError) { throw error }
    }
}
