import ArgumentParser
import HandoffKit

/// `handoffctl account import`
struct AccountImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add an account from a code exported on another laptop.",
        discussion: """
            Gives handoffd the code printed by 'handoffctl account export' (or 'handoffctl pair') \
            on another laptop. From then on the two laptops see each other's activities. Quote \
            the code if it contains spaces. A typo is detected and reported.

            EXAMPLES
              handoffctl account import '2000-G40R-40M3-…'
              handoffctl account import '1000 G40R 40M3 …' --name work
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The export code.", valueName: "code"))
    var code: String

    @Option(help: ArgumentHelp("The account's name on this laptop (default: chosen by handoffd).", valueName: "name"))
    var name: String?

    func run() async throws {
        let connection = try await connection.connect()
        let account = try await connection.importAccount(code: code, name: name)
        Terminal.printLine("Imported account \(account.name) (fingerprint \(account.fingerprint)).")
    }
}
