import DBusTestSupport
import Foundation
import HandoffKit
import Testing

/// The pairing notification (docs/desktop.md, "Pairing"): the real handoff-agent, the independent
/// notification server, and a fake handoffd that sends the events a `handoffctl pair` of the user
/// would make the real one send to the agent.
@Suite(.serialized)
struct AgentPairingTests {
    static func number(_ pairing: String = "p1", role: PairingRole = .offer, account: String? = "alice") -> Data {
        try! WireFormat.event(.pairNumber, PairNumberEvent(pairing: pairing, number: "189214", role: role, account: account))
    }

    /// The agent asked for pairing events in hello.
    static func ready(_ world: AgentHarness) async throws {
        try await world.waitForSubscription()
        try await world.eventually("the agent asked for pairing events") {
            world.withState { $0.pairingHellos.last == true }
        }
    }

    @Test func theNumberIsShownWithConfirmAndRejectAndConfirmAnswersTheDaemon() async throws {
        try await AgentHarness.run { world in
            try world.startAgent()
            try await Self.ready(world)
            world.daemon.broadcast(Self.number(account: "R&D <team>\u{202E}"))
            let shown = try await world.waitForNotifies(1)[0]
            #expect(shown.summary == "Pair with another laptop?")
            #expect(shown.app_name == "Handoff")
            #expect(shown.actions == ["confirm", "Confirm", "reject", "Reject"])
            #expect(shown.hints?["category"] == .string("x-handoff.pairing"))
            #expect(
                shown.body
                    == "The other laptop should show 189 214 too. Confirm only if it does: the other laptop receives account R&amp;D &lt;team&gt; and sees its activities. Reject if the numbers differ."
            )

            try await world.invoke(shown.id, "confirm")
            try await world.eventually("the agent answered") {
                world.daemon.requests.contains { $0.method == .pairConfirm }
            }
            let answers = try world.daemon.requests.filter { $0.method == .pairConfirm }.map {
                try $0.params(PairConfirmParams.self)
            }
            #expect(answers == [PairConfirmParams(pairing: "p1", accept: true)])
            try await world.eventually("the notification is withdrawn") {
                try await world.calls().contains { $0.method == "CloseNotification" && $0.id == shown.id }
            }
        }
    }

    @Test func rejectRefusesAndTheNotificationGoesWhenTheAttemptEndsOrIsAnsweredElsewhere() async throws {
        try await AgentHarness.run { world in
            try world.startAgent()
            try await Self.ready(world)
            // Reject: accept false.
            world.daemon.broadcast(Self.number("p1", role: .join, account: nil))
            let first = try await world.waitForNotifies(1)[0]
            #expect(first.body?.contains("this laptop receives the other laptop's account and sees its activities") == true)
            try await world.invoke(first.id, "reject")
            try await world.eventually("the agent refused") {
                world.daemon.requests.contains { $0.method == .pairConfirm }
            }
            #expect(
                try world.daemon.requests.first { $0.method == .pairConfirm }?.params(PairConfirmParams.self)
                    == PairConfirmParams(pairing: "p1", accept: false))

            // Paired without an answer here (answered in the terminal, then the pairing ended): withdrawn.
            world.daemon.broadcast(Self.number("p2"))
            let second = try await world.waitForNotifies(2)[1]
            world.daemon.broadcast(
                try WireFormat.event(
                    .paired,
                    PairedEvent(pairing: "p2", account: AccountInfo(name: "alice", fingerprint: "9d2c61a07be3f415", owner: 1000))))
            try await world.eventually("p2's notification is withdrawn on paired") {
                try await world.calls().contains { $0.method == "CloseNotification" && $0.id == second.id }
            }

            // Answered in the terminal (pairAnswered): withdrawn at once, before the end.
            world.daemon.broadcast(Self.number("p3"))
            let third = try await world.waitForNotifies(3)[2]
            world.daemon.broadcast(try WireFormat.event(.pairAnswered, PairAnsweredEvent(pairing: "p3", accept: true)))
            try await world.eventually("p3's notification is withdrawn on pairAnswered") {
                try await world.calls().contains { $0.method == "CloseNotification" && $0.id == third.id }
            }

            // A failure (timeout) withdraws it too.
            world.daemon.broadcast(Self.number("p4"))
            let fourth = try await world.waitForNotifies(4)[3]
            world.daemon.broadcast(
                try WireFormat.event(.pairFailed, PairFailedEvent(pairing: "p4", code: "timeout", message: "time ran out")))
            try await world.eventually("p4's notification is withdrawn on pairFailed") {
                try await world.calls().contains { $0.method == "CloseNotification" && $0.id == fourth.id }
            }
            // Only the one answer, from Reject.
            #expect(world.daemon.requests.filter { $0.method == .pairConfirm }.count == 1)
        }
    }

    @Test func withoutActionsTheBodySaysToAnswerInTheTerminal() async throws {
        try await AgentHarness.run(capabilities: ["body"]) { world in
            try world.startAgent()
            try await Self.ready(world)
            world.daemon.broadcast(Self.number())
            let shown = try await world.waitForNotifies(1)[0]
            #expect(shown.actions == [])
            #expect(
                shown.body
                    == "The other laptop should show 189 214 too. Answer in the terminal where handoffctl pair runs: y only if it does (the other laptop receives account alice and sees its activities), n if the numbers differ."
            )
        }
    }
}
