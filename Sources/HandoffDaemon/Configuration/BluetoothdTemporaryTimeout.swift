/// What bluetoothd's `main.conf` says about `[General] TemporaryTimeout`: how long bluetoothd keeps a
/// device with a private address after it last heard of it.
///
/// bluetoothd before 5.73 removes such a device even while it is connected, and with it the link a
/// continuation stream rides on: a link that `Device1.Connect` made counts as hearing of the device, so
/// on 5.66 with the default of 30 s a stream ends about 30 s after the continuing laptop connected
/// (docs/continuation.md 10.6, "BlueZ before 5.73 and long streams"). `status` reports the value and
/// `handoffctl doctor` warns when it is short.
public struct BluetoothdTemporaryTimeout: Sendable, Equatable {
    /// bluetoothd's value when the file does not set it, or sets something that is not a whole number
    /// (bluetoothd then keeps its default).
    static let bluetoothdDefault = 30

    /// Seconds; 0 keeps temporary devices for ever.
    public var seconds: Int

    /// Reads `[General] TemporaryTimeout` from the text of a `main.conf`.
    public init(mainConf text: String) {
        let written = BluetoothdMainConf.generalValue("TemporaryTimeout", in: text).flatMap { Int($0) }
        seconds = written.flatMap { $0 >= 0 ? $0 : nil } ?? Self.bluetoothdDefault
    }
}
