import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl pair`
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair two laptops: share one account between them.",
        discussion: """
            Two laptops see each other's activities when they hold the same account key.

            OVER BLUETOOTH (no secret is ever shown): run 'handoffctl pair --offer' on the laptop \
            that has the account (it creates one, named after you, if you have none), and \
            'handoffctl pair --join' on the other, within 2 minutes. Both print the same 6-digit \
            number: check that they match and answer y on both. Only then is the key sent, sealed \
            under a key the two laptops agreed on. If the numbers differ, answer n: someone may \
            be in the middle. A refusal, a timeout (2 minutes) or Ctrl-C leaves both laptops as \
            they were. docs/pairing.md has the protocol.

            WITH A CODE (for laptops that cannot reach each other over Bluetooth): 'handoffctl \
            pair' without options prints the account's export code, and 'handoffctl pair CODE' \
            on the other laptop imports it. The code IS the account's secret key: anyone who \
            sees it can follow your activities. Type it or read it aloud; do not post it \
            anywhere.

            EXIT STATUS (with --offer or --join)
              0  paired
              1  handoffctl could not ask (handoffd is not running, a pairing is
                 already under way, no such account, …)
              2  a usage error
              3  refused: a user answered n, on either laptop
              4  timeout: the pairing did not finish within --timeout
              5  the check failed: someone may be in the middle (commitment-mismatch,
                 confirmation-failed, authentication-failed, malformed, unexpected)
              6  another failure: the other laptop was not reached or left
                 (disconnected), is already pairing (busy), or could not store
                 the key (conflict)
              8  cancelled: interrupted (Ctrl-C), or handoffd stopped

            EXAMPLES
              handoffctl pair --offer              (on the laptop with the account)
              handoffctl pair --join               (on the other laptop)
              handoffctl pair                      (prints an export code instead)
              handoffctl pair '2000-G40R-40M3-…'   (imports it on the other laptop)
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The code printed by 'handoffctl pair' on the other laptop.", valueName: "code"))
    var code: String?

    @Flag(help: "Offer this laptop's account to a laptop nearby, over Bluetooth.")
    var offer = false

    @Flag(help: "Receive the account of a laptop nearby that offers one, over Bluetooth.")
    var join = false

    @Option(help: ArgumentHelp("With --offer: the account to offer (default: your first).", valueName: "name"))
    var account: String?

    @Option(help: ArgumentHelp("With --join: the local name for the account (default: the other laptop's).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("With --offer or --join: seconds to wait, 5 to 120 (default: 120).", valueName: "seconds"))
    var timeout: Double?

    @Flag(
        help: """
            Accept the number without asking. For tests and scripts driving both laptops only: \
            it gives up the protection against a device in the middle.
            """)
    var yes = false

    func validate() throws {
        if offer && join { throw ValidationError("--offer and --join exclude each other") }
        if (offer || join) && code != nil { throw ValidationError("a code is for pairing without Bluetooth; drop --offer/--join") }
        if !offer && !join && (account != nil || name != nil || timeout != nil || yes) {
            throw ValidationError("--account, --name, --timeout and --yes go with --offer or --join")
        }
        if account != nil && !offer { throw ValidationError("--account goes with --offer") }
        if name != nil && !join { throw ValidationError("--name goes with --join") }
        if let timeout, !(5...120).contains(timeout) {
            throw ValidationError("--timeout must be between 5 and 120 seconds, not \(timeout)")
        }
    }

    func run() async throws {
        if offer || join {
            return try await overBluetooth()
        }
        let connection = try await connection.connect()
        if let code {
            let account = try await connection.importAccount(code: code)
            Terminal.printLine(
                "Paired: this laptop now shares account \(account.name) (fingerprint \(account.fingerprint)) with your other laptop.")
            return
        }
        let name = try await Self.ensureAccount(on: connection)
        let export = try await connection.exportAccount(name: name)
        Terminal.printLine("To pair, run this on your other laptop:\n\n    handoffctl pair '\(export.code)'\n")
        Terminal.printLine("The code is your account's secret key. Over Bluetooth no secret is shown: see 'handoffctl pair --help'.")
    }

    /// The caller's account (the first), created when there is none.
    static func ensureAccount(on connection: HandoffConnection) async throws -> String {
        let accounts = try await connection.listAccounts().accounts
        if let mine = accounts.first(where: { $0.owner == getuid() }) ?? accounts.first {
            Terminal.printLine("This laptop already has account \(mine.name).")
            return mine.name
        }
        let name = try await connection.createAccount(name: Terminal.userName ?? "default").name
        Terminal.printLine("Created account \(name) on this laptop.")
        return name
    }

    /// The exit status for a `pairFailed` code (see the help above).
    static func exitStatus(for code: String) -> Int32 {
        switch code {
        case "refused": 3
        case "timeout": 4
        case "commitment-mismatch", "confirmation-failed", "authentication-failed", "malformed", "unexpected": 5
        case "cancelled": 8
        default: 6
        }
    }

    private enum Step: Sendable {
        case event(HandoffEvent)
        case answered(Bool)
        case interrupted
        case closed
    }

    private func overBluetooth() async throws {
        let signals = SignalWatcher()
        // pairingEvents: an answer given in the desktop agent's notification (docs/desktop.md) is heard here.
        let connection = try await connection.connect(pairingEvents: true)
        let (steps, feed) = AsyncStream<Step>.makeStream()
        let events = Task {
            for await event in connection.events { feed.yield(.event(event)) }
            feed.yield(.closed)
        }
        let interrupts = Task {
            if await signals.next() != nil { feed.yield(.interrupted) }
        }
        defer {
            events.cancel()
            interrupts.cancel()
        }
        let started: PairStarted
        if offer {
            let account: String
            if let wanted = self.account { account = wanted } else { account = try await Self.ensureAccount(on: connection) }
            started = try await connection.request(
                .pairOffer, PairOfferParams(account: account, timeout: timeout), as: PairStarted.self)
            Terminal.printLine(
                "Offering account \(started.account ?? account). On the other laptop, run: handoffctl pair --join")
        } else {
            started = try await connection.request(
                .pairJoin, PairJoinParams(name: name, timeout: timeout), as: PairStarted.self)
            Terminal.printLine("Looking for a laptop that offers an account ('handoffctl pair --offer' there)…")
        }
        let pairing = started.pairing
        var cancelling = false
        var asking = false
        /// The attempt was answered: here, or in the desktop agent (`pairAnswered`); a later answer typed here is ignored.
        var answered = false
        for await step in steps {
            switch step {
            case .closed:
                Terminal.printError("handoffd closed the connection: the pairing was cancelled")
                throw ExitCode(8)
            case .interrupted:
                guard !cancelling else { continue }
                cancelling = true
                _ = try? await connection.request(.pairCancel, PairingParams(pairing: pairing), as: EmptyResult.self)
            case .event(let event) where event.name == .pairNumber:
                do {
                    let shown = try event.data(as: PairNumberEvent.self)
                    guard shown.pairing == pairing else { continue }
                    Terminal.printLine("Pairing number: \(shown.number)")
                    if yes {
                        Terminal.printLine("Accepted (--yes).")
                        feed.yield(.answered(true))
                    } else {
                        // Asked on the side: Ctrl-C and the other laptop's answer still count meanwhile.
                        asking = true
                        Task { feed.yield(.answered(await Self.ask("Does the other laptop show the same number? [y/N] "))) }
                    }
                }
            case .answered(let accept):
                asking = false
                guard !cancelling, !answered else { continue }
                answered = true
                _ = try? await connection.request(
                    .pairConfirm, PairConfirmParams(pairing: pairing, accept: accept), as: EmptyResult.self)
                if accept { Terminal.printLine("Waiting for the other laptop…") }
            case .event(let event) where event.name != .pairNumber:
                switch event.name {
                case .pairAnswered:
                    let answer = try event.data(as: PairAnsweredEvent.self)
                    guard answer.pairing == pairing, !answered else { continue }
                    answered = true
                    if asking { FileHandle.standardError.write(Data("\n".utf8)) }
                    asking = false
                    Terminal.printLine(
                        answer.accept
                            ? "Confirmed on the desktop. Waiting for the other laptop…" : "Refused on the desktop.")
                case .paired:
                    let paired = try event.data(as: PairedEvent.self)
                    guard paired.pairing == pairing else { continue }
                    Terminal.printLine(
                        offer
                            ? "Paired: the other laptop now shares account \(paired.account.name) (fingerprint \(paired.account.fingerprint))."
                            : "Paired: this laptop now shares account \(paired.account.name) (fingerprint \(paired.account.fingerprint)).")
                    return
                case .pairFailed:
                    let failed = try event.data(as: PairFailedEvent.self)
                    guard failed.pairing == pairing else { continue }
                    if asking { FileHandle.standardError.write(Data("\n".utf8)) }
                    Terminal.printError("not paired (\(failed.code)): \(failed.message); nothing was stored")
                    throw ExitCode(Self.exitStatus(for: failed.code))
                default:
                    continue
                }
            case .event:
                continue
            }
        }
    }

    /// Asks on the terminal; true only for y or yes. Reads on its own thread (readLine blocks).
    static func ask(_ question: String) async -> Bool {
        FileHandle.standardError.write(Data(question.utf8))
        let answer: String? = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: readLine()) }.start()
        }
        let text = (answer ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        return text == "y" || text == "yes"
    }
}
