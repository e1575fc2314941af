import ArgumentParser
import BluetoothManagement

/// The options both commands share: our adapter and receive MTU.
struct Local: ParsableArguments {
    @Option(help: "The local adapter's identity address (Adapter1.Address).")
    var local: String
    @Option(help: "Its type, public or random (Adapter1.AddressType).")
    var localType: String = "public"
    @Option(help: "Our receive MTU (the peer's send MTU).")
    var mtu: Int = L2CAPChannel.defaultReceiveMTU

    func address() throws -> LEAddress { try LEAddress(local, type: localType) }
}
