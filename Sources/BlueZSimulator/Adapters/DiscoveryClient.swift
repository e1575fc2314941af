/// One D-Bus client's discovery state on one adapter: a session from
/// StartDiscovery, a filter from SetDiscoveryFilter, or both (bluetoothd's
/// `discovery_list` and `set_filter_list`).
struct DiscoveryClient: Sendable {
    /// The client's unique bus name.
    let owner: String
    var filter: DiscoveryFilter?
    /// True between StartDiscovery and StopDiscovery.
    var discovering = false
}
