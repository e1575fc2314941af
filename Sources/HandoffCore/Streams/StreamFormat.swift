/// Constants of the continuation streams (docs/continuation.md, section 10).
public enum StreamFormat {
    /// The first byte of a stream offer.
    public static let offerVersion: UInt8 = 1
    /// Length of an encoded offer: version, PSM, secret.
    public static let offerLength = 1 + 2 + secretLength
    /// Length of the offer's random stream secret.
    public static let secretLength = 16
    /// The LE dynamic PSM range the origin listens in.
    public static let psmRange: ClosedRange<UInt16> = 0x0080...0x00FF

    /// Bytes of a frame's length field.
    public static let headerLength = 2
    /// Bytes of the Poly1305 tag that ends every sealed frame.
    public static let tagLength = 16
    /// The longest frame on the wire, length field included.
    public static let maximumFrameLength = 2048
    /// The most data one frame carries: the longest frame less the length field, the type byte and the tag.
    public static let maximumDataLength = maximumFrameLength - headerLength - 1 - tagLength
    /// How far ahead of its turn a frame that is an SDU of its own may come (10.5, "Frames out of order"):
    /// the receiver holds at most this many less one.
    public static let reorderWindow = 32
    /// The smallest value of the length field: a type byte and the tag.
    static let minimumSealedLength = 1 + tagLength
    /// The largest value of the length field.
    static let maximumSealedLength = maximumFrameLength - headerLength

    static let continuingToOriginLabel = Array("handoff v1 stream continuing to origin".utf8)
    static let originToContinuingLabel = Array("handoff v1 stream origin to continuing".utf8)
}
