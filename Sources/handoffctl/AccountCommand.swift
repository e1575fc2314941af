import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl account`
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "Create, list, export, import and remove accounts.",
        discussion: """
            An account is a secret key shared by your devices: devices holding the same account \
            recognize each other's beacons and nobody else can. handoffd keeps the keys (readable \
            only by it); these commands ask it to act on them. You see only the accounts you own; \
            root sees all.

            'handoffctl pair' does create and export (or import) in one step.

            EXAMPLES
              handoffctl account create work
              handoffctl account list
              handoffctl account export work
              handoffctl account import '2000-G40R-…' --name work
              handoffctl account remove work
            """,
        subcommands: [
            AccountCreateCommand.self, AccountListCommand.self, AccountExportCommand.self,
            AccountImportCommand.self, AccountRemoveCommand.self,
        ])
}
