/// Why bytes are not a version 1 stream offer, or values cannot make one.
public enum StreamOfferError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An encoded offer has exactly 19 bytes.
    case wrongLength(Int)
    case unsupportedVersion(UInt8)
    /// The PSM is outside the LE dynamic range 0x0080…0x00FF.
    case psmOutOfRange(UInt16)
    /// The stream secret has exactly 16 bytes.
    case wrongSecretLength(Int)

    public var description: String {
        switch self {
        case .wrongLength(let count): "a stream offer has \(StreamFormat.offerLength) bytes, not \(count)"
        case .unsupportedVersion(let version): "stream offer version \(version) is not supported"
        case .psmOutOfRange(let psm): "PSM 0x\(Hex.encode(psm, width: 4)) is outside the LE dynamic range 0x0080…0x00ff"
        case .wrongSecretLength(let count): "a stream secret has \(StreamFormat.secretLength) bytes, not \(count)"
        }
    }
}
