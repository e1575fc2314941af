/// Versions of the handoffd socket protocol.
///
/// A client sends the versions it speaks in `hello`; the daemon answers with
/// the highest one both sides know, or `unsupported-version`.
public enum ProtocolVersion {
    /// The version this build speaks best.
    public static let current = 1
    /// Every version this build can speak.
    public static let supported: ClosedRange<Int> = 1...1
}

/// Limits on what a client may send. The daemon enforces them; clients may
/// check first for a friendlier error.
public enum ProtocolLimits {
    /// Largest request line in bytes, newline excluded.
    public static let maximumLineLength = 16 * 1024
    /// Largest `userInfo`, measured as its compact JSON encoding (Apple's guidance: 3 KB).
    public static let maximumUserInfoBytes = 3 * 1024
    /// Longest title, in bytes of UTF-8.
    public static let maximumTitleBytes = 256
    /// Longest webpage URL, in bytes.
    public static let maximumURLBytes = 2048
}
