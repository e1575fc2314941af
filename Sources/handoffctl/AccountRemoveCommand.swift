import ArgumentParser
import HandoffKit

/// `handoffctl account remove`
struct AccountRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Delete an account's key from this laptop.",
        discussion: """
            Asks for confirmation first, unless --yes is given; without a terminal to ask on, \
            --yes is required. After removal this laptop no longer sees the activities of the \
            devices that share the account, nor they its. The key stays on your other devices; \
            import it again to undo.

            EXAMPLES
              handoffctl account remove work
              handoffctl account remove work --yes
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The account to remove.", valueName: "name"))
    var name: String

    @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.")
    var yes = false

    func run() async throws {
        let connection = try await connection.connect()
        if !yes {
            guard Terminal.isInteractive else {
                throw CommandFailure("not removing account \(name) without confirmation: run with --yes")
            }
            guard Terminal.confirm("Remove account \(name) from this laptop?") else {
                throw CommandFailure("account \(name) was not removed")
            }
        }
        try await connection.removeAccount(name: name)
        Terminal.printLine("Removed account \(name).")
    }
}
