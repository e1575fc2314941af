import ArgumentParser
import HandoffKit

/// `handoffctl account export`
struct AccountExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print an account's code, to import it on another laptop.",
        discussion: """
            Prints the account's export code in groups of four characters, easy to read aloud \
            or type, and the command to run on the other laptop. Dashes and spaces in the code \
            do not matter, nor does case; I and L read as 1, O as 0.

            The code is the account's secret key: anyone who has it can follow your activities.

            EXAMPLES
              handoffctl account export work
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The account to export.", valueName: "name"))
    var name: String

    func run() async throws {
        let connection = try await connection.connect()
        let export = try await connection.exportAccount(name: name)
        var text = "Export code for account \(export.name):\n\n"
        for line in ExportCode.readable(export.code) { text += "    \(line)\n" }
        text += "\nOn your other laptop run: handoffctl account import '\(export.code)'"
        Terminal.printLine(text)
    }
}
