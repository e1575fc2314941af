/// Why an advertisement was refused.
enum AdvertisementProblem: Error, Sendable, Equatable {
    /// A property is missing, of the wrong type, or conflicts with another:
    /// bluetoothd answers `org.bluez.Error.Failed` "Failed to parse advertisement.".
    case invalid(String)
    /// The advertising data does not fit.
    case tooLong(length: Int, budget: Int)
}
