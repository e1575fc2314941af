import BlueZ
import DBus
import Glibc

/// `StreamNetwork` over bluetoothd's objects: the adapter the radio chose (`Adapter1.Address`,
/// `AddressType`) and a device's `Device1.Address` and `AddressType`.
struct BlueZStreamNetwork: StreamNetwork {
    let bluez: BlueZContext
    let settings: DaemonSettings

    func transport() async throws -> any StreamTransport {
        guard let adapter = bluez.adapter.choose(from: bluez.manager.adapters()) else {
            throw StreamTransportError.system(call: "adapter", errno: ENODEV)
        }
        return try settings.streamTransport(adapterAddress: adapter.address, addressType: adapter.addressType)
    }

    func peer(device: String) async throws -> StreamPeer {
        guard let path = try? DBusObjectPath(device), let found = bluez.manager.device(path),
            let adapter = bluez.manager.adapters().first(where: { $0.path == found.adapter })
        else {
            throw StreamTransportError.system(call: "device", errno: ENODEV)
        }
        return StreamPeer(adapterAddress: adapter.address, address: found.address, addressType: found.addressType)
    }
}
