/// A service this process serves, described before export: what becomes a
/// primary (or secondary) `org.bluez.GattService1` object of a
/// `GattApplication`, with its characteristics below it.
public struct LocalGattService: Sendable {
    public var uuid: String
    public var primary: Bool
    public var characteristics: [LocalGattCharacteristic]

    public init(uuid: String, primary: Bool = true, characteristics: [LocalGattCharacteristic]) {
        self.uuid = uuid
        self.primary = primary
        self.characteristics = characteristics
    }
}
