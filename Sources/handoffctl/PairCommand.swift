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
            Two laptops see each other's activities when they hold the same account key. Run \
            'handoffctl pair' on the first laptop: it creates an account if you have none (named \
            after you, or "default") and prints a code. Then run 'handoffctl pair CODE' with that \
            code on the second laptop, which imports the account.

            The code is the account's secret key: anyone who has it can follow your activities. \
            Type it or read it aloud; do not post it anywhere. 'handoffctl account' manages \
            accounts one by one.

            EXAMPLES
              handoffctl pair                                  (on the first laptop)
              handoffctl pair '2000-G40R-40M3-…'               (on the second laptop)
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The code printed by 'handoffctl pair' on the other laptop.", valueName: "code"))
    var code: String?

    func run() async throws {
        let connection = try await connection.connect()
        if let code {
            let account = try await connection.importAccount(code: code)
            Terminal.printLine(
                "Paired: this laptop now shares account \(account.name) (fingerprint \(account.fingerprint)) with your other laptop.")
            return
        }
        let accounts = try await connection.listAccounts().accounts
        let name: String
        if let mine = accounts.first(where: { $0.owner == getuid() }) ?? accounts.first {
            name = mine.name
            Terminal.printLine("This laptop already has account \(name).")
        } else {
            name = try await connection.createAccount(name: Terminal.userName ?? "default").name
            Terminal.printLine("Created account \(name) on this laptop.")
        }
        let export = try await connection.exportAccount(name: name)
        Terminal.printLine("To pair, run this on your other laptop:\n\n    handoffctl pair '\(export.code)'\n")
    }
}
