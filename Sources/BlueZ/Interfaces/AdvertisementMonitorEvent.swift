import DBus

/// What bluetoothd tells an `AdvertisementMonitor1` (each a call it sends
/// without waiting for a reply).
public enum AdvertisementMonitorEvent: Sendable, Equatable {
    /// The monitor is active: matching advertisements now reach the bus even
    /// when nobody discovers.
    case activated
    /// The monitor was refused or deactivated (UnregisterMonitor, adapter gone,
    /// bluetoothd stopping).
    case released
    /// A device whose advertisements match was found; its Device1 is at the path.
    case deviceFound(DBusObjectPath)
    /// bluetoothd considers the device lost.
    case deviceLost(DBusObjectPath)
}
