import BlueZ

/// What bluetoothd's `main.conf` says about LE privacy, and what it means for
/// our advertisement.
///
/// A connectable (`peripheral`) advertisement goes out from the address the
/// kernel picks for connectable advertising: with `[General] Privacy = off`,
/// bluetoothd's default, that is the adapter's public address, which never
/// changes and would link every beacon of the device, however well the
/// payload rotates. bluetoothd 5.66 takes the value exactly (case matters):
/// `device`, `network` and `on` turn LE privacy on, and the kernel then
/// advertises from a resolvable private address (RPA); `limited-device` and
/// `limited-network` still show the public address while the adapter is
/// discoverable and bondable; anything else is off. See docs/privacy.md,
/// which also says what is not solved: on a legacy-advertising controller the
/// RPA lives 15 minutes whatever our epochs do.
///
/// bluetoothd applies it once, when it starts, and the kernel refuses it while
/// the adapter is powered: so this is only what bluetoothd asked for. Whether
/// privacy is really on is the kernel's word (`KernelPrivacy`), which decides;
/// `AddressPrivacyPolicy` uses this to explain the kernel's state, and in its
/// place only when the kernel cannot be asked.
public struct BluetoothdPrivacy: Sendable, Equatable {
    /// The `Privacy` value as written, or nil when the file does not set it.
    public var value: String?

    public init(value: String?) {
        self.value = value
    }

    /// Reads `[General] Privacy` from the text of a `main.conf`.
    public init(mainConf text: String) {
        value = BluetoothdMainConf.generalValue("Privacy", in: text)
    }

    /// True when the kernel advertises connectably from a private address:
    /// exactly the values bluetoothd 5.66 reads as full LE privacy.
    public var isPrivate: Bool {
        guard let value else { return false }
        return ["device", "network", "on"].contains(value)
    }

    /// The advertisement type for `advertisement_type = "auto"`.
    public var automaticType: LEAdvertisementData.AdvertisingType {
        isPrivate ? .peripheral : .broadcast
    }
}
