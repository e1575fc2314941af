import Foundation
import HandoffCore
import HandoffProtocol
import Testing

@testable import HandoffDaemon

/// Pairing events for the other connections of the attempt's uid (docs/protocol.md, "Pairing events for
/// other connections"): the desktop agent hears the number of a `handoffctl pair` of its user and may
/// answer it; another uid hears nothing and may not answer. The exchange over the air is played by the
/// test (`PairingSystemTests` run it over the simulator): it stands where `pair.join`'s exchange task
/// would, reading the answers the daemon passes on.
@Suite struct DaemonPairingEventsTests {
    /// A join attempt of `starter`'s connection, as `pair.join` opens it; the test reads its inputs.
    static func join(on rig: DaemonRig, by starter: TestClient, account: String? = nil) async
        -> (name: String, inputs: AsyncStream<PairingState.JoinInput>)
    {
        await rig.daemon.openTestJoin(caller: starter.connection.caller, account: account)
    }

    @Test func theUsersOtherConnectionsHearTheNumberAndMayAnswerAnotherUidNeither() async throws {
        let rig = try await DaemonRig("pairevents")
        let terminal = try await rig.client(uid: 1000, app: "handoffctl")
        let agent = try await rig.client(uid: 1000, app: "handoff-agent", pairingEvents: true)
        let plain = try await rig.client(uid: 1000, app: "plain")
        let stranger = try await rig.client(uid: 1001, app: "handoff-agent", pairingEvents: true)

        let (name, inputs) = await Self.join(on: rig, by: terminal, account: "home")
        await rig.daemon.showNumber(name, PairingNumber(value: 189_214))

        // The starter and the agent get the number, with the role and the account.
        for client in [terminal, agent] {
            let shown = try await client.event("pairNumber")
            #expect(shown["pairing"] as? String == name)
            #expect(shown["number"] as? String == "189214")
            #expect(shown["role"] as? String == "join")
            #expect(shown["account"] as? String == "home")
        }
        // A connection that did not ask, and another uid's agent, get nothing.
        try await Task.sleep(for: .milliseconds(200))
        #expect(plain.eventNames.isEmpty)
        #expect(stranger.eventNames.isEmpty)

        // Another uid may neither answer nor cancel it, and learns nothing of it.
        for accept in [true, false] {
            do {
                try await stranger.call("pair.confirm", ["pairing": name, "accept": accept])
                Issue.record("another uid answered the pairing")
            } catch let error as ClientError {
                #expect(error.code == "not-found")
            }
        }
        do {
            try await stranger.call("pair.cancel", ["pairing": name])
            Issue.record("another uid cancelled the pairing")
        } catch let error as ClientError {
            #expect(error.code == "not-found")
        }

        // The agent confirms: the exchange gets the yes; every connection of the uid that asked hears it.
        try await agent.call("pair.confirm", ["pairing": name, "accept": true])
        var answers = inputs.makeAsyncIterator()
        guard case .answer(let yes)? = await answers.next() else {
            Issue.record("the exchange got no answer")
            return
        }
        #expect(yes)
        let answered = try await agent.event("pairAnswered")
        #expect(answered["pairing"] as? String == name)
        #expect(answered["accept"] as? Bool == true)
        // One answer per attempt, from whichever connection.
        do {
            try await terminal.call("pair.confirm", ["pairing": name, "accept": false])
            Issue.record("a second answer was taken")
        } catch let error as ClientError {
            #expect(error.code == "invalid-params")
        }

        // It ends: the starter and the agent hear it, nobody else.
        await rig.daemon.joinEnded(
            name, .paired(AccountInfo(name: "home", fingerprint: "9d2c61a07be3f415", owner: 1000)))
        #expect(try await terminal.event("paired")["pairing"] as? String == name)
        #expect(try await agent.event("paired")["pairing"] as? String == name)
        try await Task.sleep(for: .milliseconds(200))
        // The starter did not ask for pairing events: no pairAnswered, as before.
        #expect(terminal.eventNames.isEmpty, "\(terminal.eventNames)")
        #expect(plain.eventNames.isEmpty)
        #expect(stranger.eventNames.isEmpty)
        await rig.stop()
    }

    /// An agent that connects (or reconnects) while a number waits for its answer is told it at once;
    /// after the answer, nothing; and another uid's attempt never.
    @Test func aConnectionAskingLaterGetsTheWaitingNumber() async throws {
        let rig = try await DaemonRig("pairlater")
        let terminal = try await rig.client(uid: 1000, app: "handoffctl")
        let (name, _) = await Self.join(on: rig, by: terminal)
        await rig.daemon.showNumber(name, PairingNumber(value: 7))
        _ = try await terminal.event("pairNumber")

        let late = try await rig.client(uid: 1000, app: "handoff-agent", pairingEvents: true)
        let shown = try await late.event("pairNumber")
        #expect(shown["number"] as? String == "000007")
        #expect(shown["account"] == nil)
        let stranger = try await rig.client(uid: 1001, app: "handoff-agent", pairingEvents: true)

        // The terminal answers: the agent hears it (and withdraws its notification).
        try await terminal.call("pair.confirm", ["pairing": name, "accept": false])
        #expect(try await late.event("pairAnswered")["accept"] as? Bool == false)
        let after = try await rig.client(uid: 1000, app: "handoff-agent", pairingEvents: true)
        await rig.daemon.joinEnded(name, .failed(.refused, "you refused: the numbers differ, or you declined"))
        #expect(try await late.event("pairFailed")["code"] as? String == "refused")
        #expect(try await terminal.event("pairFailed")["code"] as? String == "refused")
        try await Task.sleep(for: .milliseconds(200))
        #expect(!after.eventNames.contains("pairNumber"), "\(after.eventNames)")
        #expect(stranger.eventNames.isEmpty)
        await rig.stop()
    }
}

extension HandoffDaemon {
    /// Opens a join attempt for `caller` as `pair.join` does, without Bluetooth: the caller of this
    /// reads the inputs the exchange task would.
    func openTestJoin(caller: Caller, account: String?) -> (name: String, inputs: AsyncStream<PairingState.JoinInput>) {
        let name = pairing.nextName()
        let (inputs, feed) = AsyncStream<PairingState.JoinInput>.makeStream()
        pairing.attempt = PairingState.Attempt(
            name: name, client: caller.client, uid: caller.uid, role: .join(inputs: feed, abort: PairingState.Abort()),
            account: account)
        return (name, inputs)
    }
}
