/// The sections and keys `handoffd.toml` may contain, in the order the shipped
/// file and the error messages list them.
enum ConfigurationSchema {
    /// Every section with its keys.
    static let sections: [(name: String, keys: [String])] = [
        (
            "bluetooth",
            [
                "adapter", "power_on", "company_id", "advertising_min_interval_ms", "advertising_max_interval_ms",
                "advertisement_type", "address_privacy", "bluetoothd_main_conf",
            ]
        ),
        ("beacon", ["epoch_seconds"]),
        ("nearby", ["expiry_seconds", "registry_cap"]),
        ("scan", ["monitor"]),
        ("socket", ["path", "mode", "group", "max_clients", "max_activities_per_client", "max_line_bytes"]),
        ("accounts", ["directory"]),
        ("device", ["name", "introduce"]),
        ("streams", ["max_per_user", "max_total", "local_directory"]),
        ("log", ["level"]),
        ("dbus", ["bus"]),
    ]

    /// The section names, in order.
    static var sectionNames: [String] { sections.map(\.name) }

    /// The keys of `section`, or nil when there is no such section.
    static func keys(of section: String) -> [String]? {
        sections.first { $0.name == section }?.keys
    }

    /// The sections that have a key called `key` (used to hint where a stray key belongs).
    static func sections(containing key: String) -> [String] {
        sections.filter { $0.keys.contains(key) }.map(\.name)
    }
}
