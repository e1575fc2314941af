#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import HandoffCore
import HandoffProtocol
import Testing

/// Pairing over Bluetooth LE end to end (docs/pairing.md): two handoffds that share nothing, on one
/// simulated air; `handoffctl pair --offer` / `--join`, and the socket methods driven directly.
@Suite(.serialized) struct PairingSystemTests {
    /// Two laptops that have never met: A has account "me", B has none.
    struct Strangers {
        let bus: PrivateBus
        let sim: SimulatedBlueZ
        let a: DaemonProcess
        let b: DaemonProcess
        let fingerprint: String

        init(adapters: Int = 2, simulatorArguments: [String] = []) async throws {
            bus = try PrivateBus()
            sim = try await SimulatedBlueZ(
                bus: bus,
                arguments: [
                    "--adapters", "\(adapters)", "--rescan-interval", "1", "--temporary-timeout", "5", "--extended-advertising",
                ] + simulatorArguments)
            a = try await DaemonProcess(bus: bus, name: "a", adapter: "hci0")
            b = try await DaemonProcess(bus: bus, name: "b", adapter: "hci1")
            let owner = try await a.client()
            fingerprint = try await owner.call(.accountCreate, AccountNameParams(name: "me"), as: AccountInfo.self)
                .fingerprint
        }

        func stop() async {
            _ = await a.terminate()
            _ = await b.terminate()
            await sim.stop()
            bus.stop()
        }

        /// The key files in a laptop's accounts directory.
        static func keyFiles(_ laptop: DaemonProcess) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "\(laptop.directory)/accounts")) ?? [])
                .filter { $0.hasSuffix(".handoff-key") }.sorted()
        }

        /// Nothing changed: A still has exactly "me", B has no account, on disk and in the daemon.
        func expectNothingStored() async throws {
            #expect(Self.keyFiles(a) == ["me.handoff-key"])
            #expect(Self.keyFiles(b).isEmpty, "B stored \(Self.keyFiles(b))")
            let onA = try await a.client().call(.accountList, EmptyParams(), as: AccountListResult.self).accounts
            let onB = try await b.client().call(.accountList, EmptyParams(), as: AccountListResult.self).accounts
            #expect(onA.map(\.name) == ["me"])
            #expect(onB.isEmpty)
        }

        /// Offer on A and join on B through the socket; returns both clients and the numbers shown.
        func reachTheNumber(timeout: Double? = nil) async throws -> (
            offer: WireClient, offerPairing: String, offerNumber: String, join: WireClient, joinPairing: String,
            joinNumber: String
        ) {
            let offer = try await a.client()
            let offered = try await offer.call(.pairOffer, PairOfferParams(timeout: timeout), as: PairStarted.self)
            #expect(offered.account == "me")
            let join = try await b.client()
            let joined = try await join.call(.pairJoin, PairJoinParams(timeout: timeout), as: PairStarted.self)
            let joinNumber = try await join.event(.pairNumber, as: PairNumberEvent.self, timeout: .seconds(30))
            let offerNumber = try await offer.event(.pairNumber, as: PairNumberEvent.self, timeout: .seconds(10))
            #expect(joinNumber.pairing == joined.pairing)
            #expect(offerNumber.pairing == offered.pairing)
            return (offer, offered.pairing, offerNumber.number, join, joined.pairing, joinNumber.number)
        }
    }

    /// `handoffctl pair --offer` on A and `--join` on B (both `--yes`): B gets A's account, and then
    /// lists the activity A publishes.
    @Test func handoffctlPairSharesTheAccountAndBThenListsAsActivity() async throws {
        let laptops = try await Strangers()
        let started = ContinuousClock.now
        async let offered = CtlProcess.run(
            ["pair", "--offer", "--yes", "--timeout", "60", "--socket", laptops.a.socket], in: laptops.bus.directory)
        try await Task.sleep(for: .milliseconds(500))
        async let joined = CtlProcess.run(
            ["pair", "--join", "--yes", "--timeout", "60", "--socket", laptops.b.socket], in: laptops.bus.directory)
        let (offer, join) = try await (offered, joined)
        print("pairing took \(ContinuousClock.now - started) on the simulator")
        #expect(offer.status == 0, "offer: \(offer.stdout) \(offer.stderr)\nA: \(laptops.a.log.suffix(3000))")
        #expect(join.status == 0, "join: \(join.stdout) \(join.stderr)\nB: \(laptops.b.log.suffix(3000))")
        // Both showed the same number.
        let number = { (text: String) in text.split(separator: "\n").first { $0.hasPrefix("Pairing number: ") } }
        #expect(number(offer.stdout) != nil)
        #expect(number(offer.stdout) == number(join.stdout), "\(offer.stdout)\n\(join.stdout)")
        #expect(join.stdout.contains("Paired: this laptop now shares account me (fingerprint \(laptops.fingerprint))"))

        let onB = try await laptops.b.client().call(.accountList, EmptyParams(), as: AccountListResult.self).accounts
        #expect(onB.map(\.name) == ["me"])
        #expect(onB.first?.fingerprint == laptops.fingerprint)
        #expect(Strangers.keyFiles(laptops.b) == ["me.handoff-key"])
        // The key file is the owner's only.
        let attributes = try FileManager.default.attributesOfItem(atPath: "\(laptops.b.directory)/accounts/me.handoff-key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // A is back to its beacon: B hears A's activity.
        let publisher = try await laptops.a.client()
        _ = try await publisher.call(
            .publish, PublishParams(type: TwoLaptops.type, title: "Release notes"), as: PublishResult.self)
        let viewer = try await laptops.b.client()
        try await eventually(within: .seconds(20)) {
            try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.first?.account == "me"
        }
        // No secret in either log: not the key file's secret.
        let secret = try String(contentsOfFile: "\(laptops.b.directory)/accounts/me.handoff-key", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("secret: ") }.map { String($0.dropFirst(8)) }
        let hex = try #require(secret)
        #expect(!laptops.a.log.contains(hex) && !laptops.b.log.contains(hex))
        #expect(!offer.stdout.contains(hex) && !join.stdout.contains(hex))
        await laptops.stop()
    }

    /// `handoffctl pair` as a person runs it: its answer typed on standard input, Ctrl-C as SIGINT.
    final class InteractiveCtl: @unchecked Sendable {
        let process: TestProcess
        let input: Int32
        let out: String
        let err: String

        init(_ arguments: [String], in directory: String) throws {
            let name = "\(directory)/handoffctl-\(UUID().uuidString.prefix(8))"
            out = "\(name).out"
            err = "\(name).err"
            let outFD = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let errFD = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw TestFailure("pipe failed") }
            defer {
                close(outFD)
                close(errFD)
                close(fds[0])
            }
            input = fds[1]
            process = try TestProcess(
                try BuiltProducts.path(of: "handoffctl"), arguments, stdout: outFD, stderr: errFD,
                extraDescriptors: [(fds[0], 0)])
        }

        deinit {
            close(input)
            process.kill()
        }

        var stdout: String { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
        var stderr: String { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" }

        func type(_ line: String) {
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
        }

        /// The number it printed, once it did.
        func number() async throws -> String {
            try await eventually(within: .seconds(20)) { self.stdout.contains("Pairing number: ") }
            let line = stdout.split(separator: "\n").first { $0.hasPrefix("Pairing number: ") }
            return String(line?.dropFirst("Pairing number: ".count) ?? "")
        }
    }

    /// Both users are asked; one answers n at the prompt: both handoffctl exit 3 (refused), nothing stored.
    /// Then Ctrl-C on the joining laptop after the offering user said y: 8 (cancelled) on both.
    @Test func handoffctlAsksAndARefusalOrCtrlCLeavesNothingStored() async throws {
        let laptops = try await Strangers()
        let directory = laptops.bus.directory
        var offer = try InteractiveCtl(["pair", "--offer", "--timeout", "30", "--socket", laptops.a.socket], in: directory)
        var join = try InteractiveCtl(["pair", "--join", "--timeout", "30", "--socket", laptops.b.socket], in: directory)
        let shown = try await (offer.number(), join.number())
        #expect(shown.0 == shown.1)
        #expect(offer.stderr.contains("Does the other laptop show the same number? [y/N]"), "\(offer.stderr)")
        join.type("y")
        offer.type("n")
        #expect(await offer.process.exitCode(within: .seconds(10)) == 3, "\(offer.stdout) \(offer.stderr)")
        #expect(await join.process.exitCode(within: .seconds(10)) == 3, "\(join.stdout) \(join.stderr)")
        #expect(offer.stderr.contains("handoffctl: not paired (refused)"), "\(offer.stderr)")
        #expect(join.stderr.contains("handoffctl: not paired (refused)"), "\(join.stderr)")
        try await laptops.expectNothingStored()

        offer = try InteractiveCtl(["pair", "--offer", "--timeout", "30", "--socket", laptops.a.socket], in: directory)
        join = try InteractiveCtl(["pair", "--join", "--timeout", "30", "--socket", laptops.b.socket], in: directory)
        _ = try await (offer.number(), join.number())
        offer.type("y")
        try await Task.sleep(for: .milliseconds(300))
        join.process.signal(SIGINT)
        #expect(await join.process.exitCode(within: .seconds(10)) == 8, "\(join.stdout) \(join.stderr)")
        #expect(await offer.process.exitCode(within: .seconds(10)) == 8, "\(offer.stdout) \(offer.stderr)")
        #expect(join.stderr.contains("not paired (cancelled)"), "\(join.stderr)")
        #expect(offer.stderr.contains("the other laptop cancelled the pairing"), "\(offer.stderr)")
        try await laptops.expectNothingStored()
        await laptops.stop()
    }

    /// The user's desktop agent (another connection of the same uid, with `pairingEvents`) hears the number of
    /// `handoffctl pair --offer` and confirms it; handoffctl hears that and stops asking; another uid's agent
    /// hears nothing and may not answer (when the run may switch uids).
    @Test func theUsersDesktopAnswersForHandoffctlAndAnotherUidCannot() async throws {
        let laptops = try await Strangers()
        let directory = laptops.bus.directory
        let agent = try await laptops.a.client()
        _ = try await agent.call(.hello, HelloParams(app: "handoff-agent", pairingEvents: true), as: HelloResult.self)
        var stranger: WireClient?
        if UserConnection.available {
            chmod(directory, 0o755)
            let other = try await UserConnection.client(socket: laptops.a.socket, uid: 4242)
            _ = try await other.call(.hello, HelloParams(app: "handoff-agent", pairingEvents: true), as: HelloResult.self)
            stranger = other
        }
        let offer = try InteractiveCtl(["pair", "--offer", "--timeout", "30", "--socket", laptops.a.socket], in: directory)
        let join = try InteractiveCtl(["pair", "--join", "--timeout", "30", "--socket", laptops.b.socket], in: directory)
        let shown = try await agent.event(.pairNumber, as: PairNumberEvent.self, timeout: .seconds(30))
        #expect(shown.role == .offer)
        #expect(shown.account == "me")
        #expect(try await offer.number() == shown.number)
        if let stranger {
            #expect(try await stranger.failure(.pairConfirm, PairConfirmParams(pairing: shown.pairing, accept: true)).code == .notFound)
            #expect(try await stranger.failure(.pairCancel, PairingParams(pairing: shown.pairing)).code == .notFound)
        }
        _ = try await agent.call(.pairConfirm, PairConfirmParams(pairing: shown.pairing, accept: true), as: EmptyResult.self)
        #expect(try await agent.event(.pairAnswered, as: PairAnsweredEvent.self).accept)
        try await eventually(within: .seconds(10)) { offer.stdout.contains("Confirmed on the desktop.") }
        _ = try await join.number()
        join.type("y")
        #expect(await join.process.exitCode(within: .seconds(15)) == 0, "\(join.stdout) \(join.stderr)")
        #expect(await offer.process.exitCode(within: .seconds(15)) == 0, "\(offer.stdout) \(offer.stderr)")
        #expect(try await agent.event(.paired, as: PairedEvent.self).account.fingerprint == laptops.fingerprint)
        #expect(Strangers.keyFiles(laptops.b) == ["me.handoff-key"])
        if let stranger {
            #expect(try await stranger.event(.pairNumber, timeout: .milliseconds(300)) == nil)
            #expect(try await stranger.event(.paired, timeout: .milliseconds(300)) == nil)
        }
        await laptops.stop()
    }

    /// The joining user says the numbers differ: both end with `refused`, nothing is stored.
    @Test func aRefusalOnTheJoiningLaptopLeavesNothingStored() async throws {
        let laptops = try await Strangers()
        let run = try await laptops.reachTheNumber()
        #expect(run.offerNumber == run.joinNumber)
        _ = try await run.join.call(.pairConfirm, PairConfirmParams(pairing: run.joinPairing, accept: false), as: EmptyResult.self)
        let joinFailed = try await run.join.event(.pairFailed, as: PairFailedEvent.self)
        let offerFailed = try await run.offer.event(.pairFailed, as: PairFailedEvent.self)
        #expect(joinFailed.code == "refused")
        #expect(offerFailed.code == "refused")
        #expect(offerFailed.message.contains("the other laptop refused"), "\(offerFailed.message)")
        try await laptops.expectNothingStored()
        await laptops.stop()
    }

    /// The offering user refuses after the joining user said yes: the key is never sent.
    @Test func aRefusalOnTheOfferingLaptopLeavesNothingStored() async throws {
        let laptops = try await Strangers()
        let run = try await laptops.reachTheNumber()
        _ = try await run.join.call(.pairConfirm, PairConfirmParams(pairing: run.joinPairing, accept: true), as: EmptyResult.self)
        // One answer per attempt: a second is refused and changes nothing.
        #expect(
            try await run.join.failure(.pairConfirm, PairConfirmParams(pairing: run.joinPairing, accept: true)).code
                == .invalidParams)
        try await Task.sleep(for: .milliseconds(500))
        _ = try await run.offer.call(.pairConfirm, PairConfirmParams(pairing: run.offerPairing, accept: false), as: EmptyResult.self)
        do {
            #expect(try await run.offer.event(.pairFailed, as: PairFailedEvent.self).code == "refused")
            #expect(try await run.join.event(.pairFailed, as: PairFailedEvent.self).code == "refused")
        } catch {
            Issue.record("\(error)\nA:\n\(laptops.a.log.suffix(4000))\nB:\n\(laptops.b.log.suffix(4000))")
        }
        try await laptops.expectNothingStored()
        await laptops.stop()
    }

    /// Nobody answers: each side's own timeout ends it, and nothing is stored.
    @Test func aTimeoutLeavesNothingStored() async throws {
        let laptops = try await Strangers()
        let run = try await laptops.reachTheNumber(timeout: 8)
        #expect(try await run.join.event(.pairFailed, as: PairFailedEvent.self, timeout: .seconds(15)).code == "timeout")
        #expect(try await run.offer.event(.pairFailed, as: PairFailedEvent.self, timeout: .seconds(15)).code == "timeout")
        try await laptops.expectNothingStored()
        // An offer nobody joins times out too, and A goes back to normal: a new offer is possible.
        let offer = try await laptops.a.client()
        _ = try await offer.call(.pairOffer, PairOfferParams(timeout: 5), as: PairStarted.self)
        #expect(try await offer.event(.pairFailed, as: PairFailedEvent.self, timeout: .seconds(10)).code == "timeout")
        try await laptops.expectNothingStored()
        await laptops.stop()
    }

    /// Ctrl-C on the joining laptop (its client leaves) after the offering user said yes: nothing stored.
    @Test func theJoiningClientLeavingCancelsAndLeavesNothingStored() async throws {
        let laptops = try await Strangers()
        let run = try await laptops.reachTheNumber()
        _ = try await run.offer.call(.pairConfirm, PairConfirmParams(pairing: run.offerPairing, accept: true), as: EmptyResult.self)
        run.join.close()
        let offerFailed = try await run.offer.event(.pairFailed, as: PairFailedEvent.self, timeout: .seconds(10))
        #expect(offerFailed.code == "cancelled")
        try await laptops.expectNothingStored()
        await laptops.stop()
    }

    /// A device that offers but breaks the protocol: one that changes its nonce after committing (as a
    /// device in the middle must, to steer the number) is caught before any number is shown; one whose
    /// account does not open under the agreed key is refused. Either way B stores nothing and tells it why.
    @Test(arguments: FakeOfferer.Behaviour.allCases)
    func aDishonestOffererIsCaughtAndNothingIsStored(_ behaviour: FakeOfferer.Behaviour) async throws {
        let laptops = try await Strangers()
        let stranger = try AccountKey(name: "stranger", secret: [UInt8](repeating: 0x5A, count: 32))
        let fake = try await FakeOfferer(
            bus: laptops.bus, adapter: "/org/bluez/hci0", account: stranger, behaviour: behaviour)
        let join = try await laptops.b.client()
        let joined = try await join.call(.pairJoin, PairJoinParams(timeout: 30), as: PairStarted.self)
        let expected: String
        switch behaviour {
        case .changesNonce:
            expected = "commitment-mismatch"
        case .tamperedAccount:
            expected = "authentication-failed"
            let shown = try await join.event(.pairNumber, as: PairNumberEvent.self, timeout: .seconds(20))
            _ = try await join.call(.pairConfirm, PairConfirmParams(pairing: shown.pairing, accept: true), as: EmptyResult.self)
        }
        let failed = try await join.event(.pairFailed, as: PairFailedEvent.self, timeout: .seconds(20))
        if behaviour == .changesNonce { #expect(join.skippedEvents.isEmpty, "a number was shown: \(join.skippedEvents)") }
        #expect(failed.pairing == joined.pairing)
        #expect(failed.code == expected, "\(failed.message)")
        #expect(failed.message.contains("someone may be in the middle"), "\(failed.message)")
        try await laptops.expectNothingStored()
        // B told the fake why, with a failed message.
        let code = try #require(PairingFailure.allCases.first { $0.name == expected })
        try await eventually(within: .seconds(5)) { fake.written.messages.withLock { $0.last } == [0x10, 0x0F, code.rawValue] }
        if behaviour == .changesNonce {
            #expect(!fake.written.messages.withLock { $0 }.contains { $0.count >= 2 && $0[1] == 0x05 }, "B confirmed")
        }
        await fake.stop()
        await laptops.stop()
    }

    /// A third laptop joins the same offer at the same time: the offer is bound to the first laptop that
    /// wrote `start`; the other gets `busy` and stores nothing, and the first pairs.
    @Test func aThirdLaptopJoiningAtTheSameTimeGetsBusy() async throws {
        let laptops = try await Strangers(adapters: 3)
        let c = try await DaemonProcess(bus: laptops.bus, name: "c", adapter: "hci2")
        let offer = try await laptops.a.client()
        let offered = try await offer.call(.pairOffer, PairOfferParams(timeout: 30), as: PairStarted.self)
        let joiners = [try await laptops.b.client(), try await c.client()]
        for joiner in joiners { _ = try await joiner.call(.pairJoin, PairJoinParams(timeout: 30), as: PairStarted.self) }
        var outcomes: [EventName] = []
        var bound: (client: WireClient, shown: PairNumberEvent)?
        var failedCode: String?
        for joiner in joiners {
            let (name, line) = try await joiner.event(among: [.pairNumber, .pairFailed], timeout: .seconds(20))
            outcomes.append(name)
            if name == .pairNumber { bound = (joiner, try WireFormat.eventData(PairNumberEvent.self, from: line)) }
            if name == .pairFailed { failedCode = try WireFormat.eventData(PairFailedEvent.self, from: line).code }
        }
        #expect(outcomes.sorted { $0.rawValue < $1.rawValue } == [.pairFailed, .pairNumber], "\(outcomes)")
        #expect(failedCode == "busy")
        let winner = try #require(bound)
        let number = try await offer.event(.pairNumber, as: PairNumberEvent.self)
        #expect(number.number == winner.shown.number)
        _ = try await offer.call(.pairConfirm, PairConfirmParams(pairing: offered.pairing, accept: true), as: EmptyResult.self)
        _ = try await winner.client.call(
            .pairConfirm, PairConfirmParams(pairing: winner.shown.pairing, accept: true), as: EmptyResult.self)
        #expect(try await winner.client.event(.paired, as: PairedEvent.self).account.fingerprint == laptops.fingerprint)
        #expect(try await offer.event(.paired, as: PairedEvent.self).account.name == "me")
        // Exactly one of B and C holds the key.
        let holders = [laptops.b, c].filter { Strangers.keyFiles($0) == ["me.handoff-key"] }
        let empty = [laptops.b, c].filter { Strangers.keyFiles($0).isEmpty }
        #expect(holders.count == 1 && empty.count == 1)
        _ = await c.terminate()
        await laptops.stop()
    }

    /// bluetoothd restarts once both laptops show the number: the joining side sees bluetoothd go and
    /// ends (`disconnected`), the offering side ends at its deadline, nothing is stored; a new pairing
    /// afterwards succeeds.
    @Test func aBluetoothdRestartMidPairingLeavesNothingStored() async throws {
        let laptops = try await Strangers()
        let run = try await laptops.reachTheNumber(timeout: 10)
        try await laptops.sim.restart(downtime: .milliseconds(300), graceful: false)
        let joinFailed = try await run.join.event(.pairFailed, as: PairFailedEvent.self, timeout: .seconds(5))
        #expect(joinFailed.code == "disconnected", "\(joinFailed.message)")
        let offerFailed = try await run.offer.event(.pairFailed, as: PairFailedEvent.self, timeout: .seconds(15))
        #expect(offerFailed.code == "timeout")
        try await laptops.expectNothingStored()

        let again = try await laptops.reachTheNumber(timeout: 30)
        #expect(again.offerNumber == again.joinNumber)
        _ = try await again.join.call(.pairConfirm, PairConfirmParams(pairing: again.joinPairing, accept: true), as: EmptyResult.self)
        _ = try await again.offer.call(.pairConfirm, PairConfirmParams(pairing: again.offerPairing, accept: true), as: EmptyResult.self)
        #expect(try await again.join.event(.paired, as: PairedEvent.self).account.fingerprint == laptops.fingerprint)
        #expect(Strangers.keyFiles(laptops.b) == ["me.handoff-key"])
        await laptops.stop()
    }

    /// B already has an account named "me" (another key): the received account cannot be stored under its
    /// name, so B refuses it (`conflict`), tells A, and keeps its own "me" as it was. Joining again with
    /// `name` stores it under that name.
    @Test func aNameTakenOnTheJoiningLaptopIsAConflictThenAnotherNameWorks() async throws {
        let laptops = try await Strangers()
        let own = try await laptops.b.client().call(.accountCreate, AccountNameParams(name: "me"), as: AccountInfo.self)
        let keyFile = "\(laptops.b.directory)/accounts/me.handoff-key"
        let before = try String(contentsOfFile: keyFile, encoding: .utf8)
        let run = try await laptops.reachTheNumber()
        _ = try await run.join.call(.pairConfirm, PairConfirmParams(pairing: run.joinPairing, accept: true), as: EmptyResult.self)
        _ = try await run.offer.call(.pairConfirm, PairConfirmParams(pairing: run.offerPairing, accept: true), as: EmptyResult.self)
        #expect(try await run.join.event(.pairFailed, as: PairFailedEvent.self).code == "conflict")
        let offerFailed = try await run.offer.event(.pairFailed, as: PairFailedEvent.self)
        #expect(offerFailed.code == "conflict")
        #expect(offerFailed.message.contains("could not store"), "\(offerFailed.message)")
        #expect(try String(contentsOfFile: keyFile, encoding: .utf8) == before)
        #expect(Strangers.keyFiles(laptops.b) == ["me.handoff-key"])
        #expect(try await laptops.b.client().call(.accountList, EmptyParams(), as: AccountListResult.self).accounts == [own])

        // Taken names are refused before anything goes on the air.
        let taken = try await laptops.b.client().failure(.pairJoin, PairJoinParams(name: "me"))
        #expect(taken.code == .conflict)

        let offer = try await laptops.a.client()
        let offered = try await offer.call(.pairOffer, PairOfferParams(), as: PairStarted.self)
        let join = try await laptops.b.client()
        let joined = try await join.call(.pairJoin, PairJoinParams(name: "home"), as: PairStarted.self)
        _ = try await join.event(.pairNumber, as: PairNumberEvent.self, timeout: .seconds(20))
        _ = try await offer.event(.pairNumber, as: PairNumberEvent.self)
        _ = try await join.call(.pairConfirm, PairConfirmParams(pairing: joined.pairing, accept: true), as: EmptyResult.self)
        _ = try await offer.call(.pairConfirm, PairConfirmParams(pairing: offered.pairing, accept: true), as: EmptyResult.self)
        let paired = try await join.event(.paired, as: PairedEvent.self)
        #expect(paired.account.name == "home")
        #expect(paired.account.fingerprint == laptops.fingerprint)
        #expect(Strangers.keyFiles(laptops.b) == ["home.handoff-key", "me.handoff-key"])
        await laptops.stop()
    }

    /// The offering handoffd stops (SIGTERM) once both show the number: it exits cleanly, tells the
    /// joining laptop, which ends with `cancelled`, and B stores nothing.
    @Test func theOfferingDaemonStoppingCancelsAndLeavesNothingStored() async throws {
        let laptops = try await Strangers()
        let run = try await laptops.reachTheNumber()
        #expect(await laptops.a.terminate() == 0)
        let joinFailed = try await run.join.event(.pairFailed, as: PairFailedEvent.self, timeout: .seconds(10))
        #expect(joinFailed.code == "cancelled")
        #expect(joinFailed.message.contains("the other laptop cancelled"), "\(joinFailed.message)")
        #expect(Strangers.keyFiles(laptops.b).isEmpty)
        #expect(Strangers.keyFiles(laptops.a) == ["me.handoff-key"])
        await laptops.stop()
    }

    /// A second pairing on one daemon is refused while one is under way.
    @Test func oneAttemptAtATime() async throws {
        let laptops = try await Strangers()
        let first = try await laptops.a.client()
        _ = try await first.call(.pairOffer, PairOfferParams(timeout: 30), as: PairStarted.self)
        let second = try await laptops.a.client()
        #expect(try await second.failure(.pairOffer, PairOfferParams()).code == .conflict)
        #expect(try await second.failure(.pairJoin, PairJoinParams()).code == .conflict)
        await laptops.stop()
    }
}
