/// A failure a command reports in its own words; printed as `handoffctl: <message>`, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}
