/// Event logging: one line per event to the configured sink (the executable
/// writes them to stderr). Any thread.
struct SimulatorLog: Sendable {
    let sink: (@Sendable (String) -> Void)?

    func info(_ message: @autoclosure () -> String) {
        sink?(message())
    }

    func error(_ message: @autoclosure () -> String) {
        sink?("error: " + message())
    }
}
