import ArgumentParser
import HandoffKit
import HandoffProtocol

/// `handoffctl account list`
struct AccountListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the accounts you may use.",
        discussion: """
            Prints each account's name, its fingerprint (the same on every device that holds the \
            key, so you can compare two laptops) and its owner.

            With --json, prints the daemon's "account.list" result unchanged as one JSON object.

            EXAMPLES
              handoffctl account list
              handoffctl account list --json
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the daemon's result as one JSON object.")
    var json = false

    func run() async throws {
        try await JSONOutput.printRead(.accountList, json: json, on: try await connection.connect()) {
            Self.render(try await $0.listAccounts().accounts)
        }
    }

    static func render(_ accounts: [AccountInfo]) -> String {
        guard !accounts.isEmpty else { return "No accounts. Create one with: handoffctl pair" }
        var table = Table("NAME", "FINGERPRINT", "OWNER")
        for account in accounts.sorted(by: { $0.name < $1.name }) {
            let owner = Terminal.userName(of: account.owner).map { "\($0) (\(account.owner))" } ?? "uid \(account.owner)"
            table.append([account.name, account.fingerprint, owner])
        }
        return table.rendered
    }
}
