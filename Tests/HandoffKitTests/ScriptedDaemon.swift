import Foundation
import HandoffProtocol
import HandoffTestSupport
import Synchronization

/// A fake daemon that answers every method from an in-memory state, for the
/// `handoffctl` tests.
final class ScriptedDaemon: Sendable {
    struct State: Sendable {
        var activities: [NearbyActivity] = []
        var accounts: [AccountInfo] = []
        var status = ScriptedDaemon.healthyStatus
        /// Frames sent to a client right after it subscribes; then the connection closes when `closeAfterEvents`.
        var events: [Data] = []
        var closeAfterEvents = false
        /// How `continue` of each nearby id ends; other ids get `not-found`.
        var continuations: [String: ContinueScript] = [:]
        /// Continuations started and not finished (`.never`), by continuation id, with their nearby id.
        var unfinished: [String: String] = [:]
        var continueCount = 0
        var publishCount = 0
    }

    /// What the daemon does after answering `continue` with `willContinue`.
    enum ContinueScript: Sendable {
        /// Sends `continued` with this activity.
        case succeed(ContinuedActivity)
        /// Sends `continued` with this activity, and `stream` naming `path` when the request asked for streams.
        case succeedWithStream(ContinuedActivity, path: String)
        /// Sends `continueFailed` with this code and message.
        case fail(ContinueError.Code, String)
        /// Sends nothing until `continue.cancel`, which it answers with `continueFailed` `cancelled`.
        case never
    }

    /// Holds the state where both the daemon's behavior and the tests reach it.
    final class Box: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }

    private let box: Box
    let daemon: FakeDaemon

    /// Reads or changes the state.
    func withState<R: Sendable>(_ body: (inout State) -> R) -> R {
        box.state.withLock { body(&$0) }
    }

    var socketPath: String { daemon.socketPath }
    var requests: [FakeRequest] { daemon.requests }

    init(_ initial: State = State(), socketPath: String = FakeDaemon.temporarySocketPath()) throws {
        let box = Box(initial)
        self.box = box
        daemon = try FakeDaemon(
            { request, client in
                ScriptedDaemon.answer(request, client, box.state)
            }, socketPath: socketPath)
    }

    func stop() { daemon.stop() }

    static let healthyStatus = StatusResult(
        daemon: "handoffd 0.1.0", adapter: "hci0", adapterAddress: "00:1A:7D:DA:71:13", radio: "scanning", scanning: true,
        advertising: false, lastError: nil, accounts: ["alice"], nearbyCount: 1, clientCount: 2, localActivityCount: 0,
        currentActivityType: nil, epochSeconds: 600, beaconsRecognized: 12, beaconsRejected: 3,
        beaconCopiesRefused: 4, continuation: ContinuationAvailability(
            state: "available", addressPrivacy: "on", adapter: "hci0", reason: "LE privacy on, hci0"),
        scanReportsDropped: 7)

    static let sampleCode = "2000-G40R-40M3-0E20-9185-GR38-E1W8-124G-K2GA-HC5R-R34D-1P70-X3RF-GR6N"

    private static func answer(_ request: FakeRequest, _ client: FakeClient, _ state: borrowing Mutex<State>) {
        do {
            switch request.method {
            case .hello:
                client.answer(request, HelloResult(version: 1, daemon: "handoffd 0.1.0"))
            case .list:
                client.answer(request, ListResult(activities: state.withLock { $0.activities }))
            case .status:
                client.answer(request, state.withLock { $0.status })
            case .publish:
                _ = try request.params(PublishParams.self)
                let count = state.withLock { state in
                    state.publishCount += 1
                    return state.publishCount
                }
                client.answer(request, PublishResult(id: count == 1 ? "a1b2c3" : "a1b2c3-\(count)"))
            case .update, .resign, .invalidate, .unsubscribe:
                client.answer(request, EmptyResult())
            case .subscribe:
                client.answer(request, EmptyResult())
                let (events, close) = state.withLock { ($0.events, $0.closeAfterEvents) }
                for event in events { client.send(event) }
                if close { client.close() }
            case .accountCreate:
                let name = try request.params(AccountNameParams.self).name
                let info = AccountInfo(name: name, fingerprint: "3f2a91c0", owner: getuid())
                state.withLock { $0.accounts.append(info) }
                client.answer(request, info)
            case .accountList:
                client.answer(request, AccountListResult(accounts: state.withLock { $0.accounts }))
            case .devices:
                client.answer(
                    request,
                    DevicesResult(devices: state.withLock { $0.accounts }.map {
                        DeviceInfo(
                            account: $0.name, name: "this laptop", fingerprint: "0b9d44e1a7c2f305", thisDevice: true,
                            nearby: false, introduced: nil, lastHeard: nil)
                    }))
            case .devicesRemove:
                let params = try request.params(DevicesRemoveParams.self)
                guard params.device == "old laptop" else {
                    return client.fail(request, .notFound, "no device \"\(params.device)\" in your accounts; see handoffctl devices")
                }
                client.answer(
                    request,
                    DevicesRemoveResult(
                        account: params.account ?? "alice", fingerprint: "77aa01c2d3e4f506",
                        removed: RemovedDevice(name: "old laptop", fingerprint: "9c1f2e3d4b5a6978"),
                        pending: [RemovedDevice(name: "desk", fingerprint: "5d2e7a90c1b3f468")],
                        until: Date(timeIntervalSince1970: 1_775_000_000)))
            case .accountExport:
                let name = try request.params(AccountNameParams.self).name
                guard state.withLock({ $0.accounts.contains { $0.name == name } }) else {
                    return client.fail(request, .notFound, "no account named \"\(name)\"")
                }
                client.answer(request, AccountExportResult(name: name, code: sampleCode))
            case .accountImport:
                let params = try request.params(AccountImportParams.self)
                let info = AccountInfo(name: params.name ?? "imported", fingerprint: "3f2a91c0", owner: getuid())
                state.withLock { $0.accounts.append(info) }
                client.answer(request, info)
            case .accountRemove:
                let name = try request.params(AccountNameParams.self).name
                state.withLock { $0.accounts.removeAll { $0.name == name } }
                client.answer(request, EmptyResult())
            case .continue:
                let params = try request.params(ContinueParams.self)
                let (script, continuation, type) = state.withLock { state in
                    state.continueCount += 1
                    let type = state.activities.first { $0.id == params.id }?.type
                    return (state.continuations[params.id], "c\(state.continueCount)", type)
                }
                guard let script else {
                    return client.fail(request, .notFound, "no nearby activity \"\(params.id)\"")
                }
                client.answer(request, WillContinue(continuation: continuation, nearbyID: params.id, type: type))
                switch script {
                case .succeed(let activity):
                    client.event(.continued, ContinuedEvent(continuation: continuation, activity: activity))
                case .succeedWithStream(let activity, let path):
                    client.event(
                        .continued,
                        ContinuedEvent(
                            continuation: continuation, activity: activity,
                            stream: params.streams == true ? StreamSocket(path: path) : nil))
                case .fail(let code, let message):
                    client.event(
                        .continueFailed,
                        ContinueFailedEvent(continuation: continuation, nearbyID: params.id, code: code, message: message))
                case .never:
                    state.withLock { $0.unfinished[continuation] = params.id }
                }
            case .continueCancel:
                let continuation = try request.params(ContinuationParams.self).continuation
                guard let nearbyID = state.withLock({ $0.unfinished.removeValue(forKey: continuation) }) else {
                    return client.fail(request, .notFound, "no unfinished continuation \"\(continuation)\"")
                }
                client.answer(request, EmptyResult())
                client.event(
                    .continueFailed,
                    ContinueFailedEvent(
                        continuation: continuation, nearbyID: nearbyID, code: .cancelled, message: "cancelled by the client"))
            case .pairOffer, .pairJoin, .pairConfirm, .pairCancel:
                client.fail(request, .internal, "the scripted daemon does not pair")
            }
        } catch let error as ProtocolError {
            client.send(WireFormat.error(id: request.id, error))
        } catch {
            client.fail(request, .internal, "\(error)")
        }
    }
}
