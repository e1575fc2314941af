import DBus
import HandoffCore
import HandoffDaemon
import HandoffProtocol
import Synchronization

/// A `ContinuationLink` between daemons in one process: a request is handed
/// to the origin daemon's handler, found by the device path its beacons came
/// from, and the notifications come back to be reassembled and opened with
/// HandoffCore, as they would over GATT. A fault can be set to make the
/// origin silent, or to tamper with what it sends.
final class LoopbackLink: ContinuationLink {
    enum Fault: Sendable { case none, silent, tamper }

    /// The origin handlers of every link, by device path.
    final class Registry: Sendable {
        let handlers = Mutex<[String: ContinuationRequestHandler]>([:])
    }

    let device: DBusObjectPath
    let registry: Registry
    let fault = Mutex<Fault>(.none)
    /// Requests written by this side, and exchanges answered by it.
    let written = Mutex(0)

    init(device: DBusObjectPath, registry: Registry) {
        self.device = device
        self.registry = registry
    }

    func serve(_ handler: @escaping ContinuationRequestHandler) async {
        registry.handlers.withLock { $0[device.rawValue] = handler }
        try? await Task.sleep(for: .seconds(1 << 40))
        registry.handlers.withLock { $0[device.rawValue] = nil }
    }

    func fetch(_ job: ContinuationJob) async -> Result<ExchangeResponse, ContinueError> {
        await withTaskGroup(of: Result<ExchangeResponse, ContinueError>?.self) { group in
            group.addTask { await self.exchange(job) }
            group.addTask {
                try? await Task.sleep(for: job.timeout)
                return Task.isCancelled ? nil : .failure(ContinueError(.timeout, "no answer within the timeout"))
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let next { return next }
            }
            return .failure(ContinueError(.cancelled, "cancelled"))
        }
    }

    private func exchange(_ job: ContinuationJob) async -> Result<ExchangeResponse, ContinueError>? {
        while !Task.isCancelled {
            guard let origin = await job.origin(), let handler = registry.handlers.withLock({ $0[origin] }) else {
                return .failure(ContinueError(.outOfRange, "the origin device is no longer heard"))
            }
            guard let pending = await job.request() else {
                return .failure(ContinueError(.outOfRange, "the activity is no longer nearby"))
            }
            written.withLock { $0 += 1 }
            let reply: ContinuationReply
            do throws(ExchangeStatus) {
                reply = try await handler(pending.request, ContinuationRequestContext(mtu: 185, peer: device.rawValue))
            } catch .busy {
                try? await Task.sleep(for: .milliseconds(50))
                continue
            } catch {
                return .failure(ContinueError(.rejected, "the origin device refused: \(error)"))
            }
            switch fault.withLock({ $0 }) {
            case .silent:
                await reply.completion(false)
                try? await Task.sleep(for: .seconds(1 << 40))
                return nil
            case .tamper, .none:
                break
            }
            var notifications = reply.notifications
            if fault.withLock({ $0 }) == .tamper, var last = notifications.popLast() {
                last[last.count - 1] ^= 0x01
                notifications.append(last)
            }
            await reply.completion(true)
            var assembler = ChunkAssembler(session: pending.session)
            do throws(ExchangeError) {
                for chunk in notifications {
                    if let whole = try assembler.add(chunk) { return .success(try pending.openResponse(whole)) }
                }
            } catch .refused(let status) {
                return .failure(ContinueError(.rejected, "the origin device refused: \(status)"))
            } catch {
                return .failure(ContinueError(.payloadInvalid, "the response was invalid: \(error)"))
            }
            return .failure(ContinueError(.outOfRange, "the origin device disconnected during the exchange"))
        }
        return nil
    }
}
