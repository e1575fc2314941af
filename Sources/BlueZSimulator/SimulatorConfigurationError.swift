/// A configuration value out of range.
public struct SimulatorConfigurationError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
