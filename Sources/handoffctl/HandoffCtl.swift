import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl`: the command-line client of handoffd.
@main
struct HandoffCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoffctl",
        abstract: "Control handoffd: nearby activities, publishing, continuing, accounts, pairing.",
        discussion: """
            handoffctl is the command-line client of handoffd, the daemon that advertises the \
            current activity of this laptop over Bluetooth LE and hears the activities of your \
            other laptops. Every command talks to the daemon over its Unix socket; handoffctl \
            never touches Bluetooth or key files itself.

            To get started on two laptops, run 'handoffctl pair' on the first and follow what it \
            prints on the second. 'handoffctl doctor' explains what is missing when something \
            does not work.

            ENVIRONMENT
              HANDOFF_SOCKET   the daemon's socket, when --socket is not given
                               (default: /run/handoffd/handoffd.sock)

            EXIT STATUS
              0  success
              1  the command failed; the reason is on standard error as
                 'handoffctl: <message>'
              2  a usage error
              3-9  from 'handoffctl continue' only: why the continuation failed
                   (see 'handoffctl continue --help')

            EXAMPLES
              handoffctl pair      share this laptop's account with another laptop
              handoffctl list      what are my other laptops doing?
              handoffctl watch     follow nearby activities as they come and go
              handoffctl continue ID --open
                                   continue one of them here (in the browser)
              handoffctl doctor    check the daemon, the adapter and the accounts

            Shell completion scripts: handoffctl --generate-completion-script bash|zsh|fish
            """,
        version: "handoffctl \(HandoffCtl.version) (protocol version \(ProtocolVersion.current))",
        subcommands: [
            ListCommand.self, WatchCommand.self, StatusCommand.self, PublishCommand.self, ContinueCommand.self,
            AccountCommand.self, PairCommand.self, DevicesCommand.self, DoctorCommand.self,
        ]
    )

    /// This program's version.
    static let version = HandoffVersion.current

    /// Runs the command line, printing failures as `handoffctl: <message>`.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            fail(with: error)
        }
    }

    /// Exits with `error`'s message and status: 1 for failures, 2 for usage errors.
    static func fail(with error: any Error) -> Never {
        if let error = error as? HandoffClientError {
            Terminal.printError(error.description)
            Foundation.exit(1)
        }
        if let error = error as? CommandFailure {
            Terminal.printError(error.message)
            Foundation.exit(1)
        }
        let code = exitCode(for: error)
        if code == .validationFailure {
            var message = fullMessage(for: error)
            if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
            Terminal.printError(message)
            Foundation.exit(2)
        }
        if code == .success || error is ExitCode {
            exit(withError: error)
        }
        Terminal.printError(message(for: error))
        Foundation.exit(1)
    }
}
