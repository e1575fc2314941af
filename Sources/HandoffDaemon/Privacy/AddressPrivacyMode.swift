/// `[bluetooth] address_privacy`: what handoffd does when LE privacy is on but
/// the controller has legacy advertising only.
///
/// Such a controller keeps one resolvable private address for all its
/// advertisements and scans, and the kernel makes a new one only after
/// `rpa_timeout` (15 minutes by default, changeable only by root through
/// debugfs) and only when advertising restarts: re-registering our
/// advertisement at an epoch boundary does not change it. The address then
/// spans epoch boundaries and links the beacons either side of them for any
/// stranger, however well the payload rotates (docs/privacy.md, section 2).
/// With extended advertising every new instance gets a fresh address, and with
/// privacy off a non-connectable advertisement gets a fresh non-resolvable one:
/// neither case needs this setting.
public enum AddressPrivacyMode: String, Sendable, Equatable, CaseIterable {
    /// Stay off the air, and say why and what fixes it (the default).
    case strict
    /// Advertise anyway, and say at warning level that consecutive epochs' beacons are linkable.
    case warn
}
