import ArgumentParser
import HandoffKit

/// `handoffctl account create`
struct AccountCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create an account with a fresh key.",
        discussion: """
            Asks handoffd to generate a new account key and keep it under NAME, owned by you. \
            Copy it to your other devices with 'handoffctl account export NAME'.

            EXAMPLES
              handoffctl account create work
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The account's name on this laptop.", valueName: "name"))
    var name: String

    func run() async throws {
        let connection = try await connection.connect()
        let account = try await connection.createAccount(name: name)
        Terminal.printLine("Created account \(account.name) (fingerprint \(account.fingerprint)).")
        Terminal.printLine("To use it on another laptop, run: handoffctl account export \(account.name)")
    }
}
