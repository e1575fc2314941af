/// What the module's waits need from a Duration: poll()'s timeout, and seconds for error messages.
extension Duration {
    /// This duration as poll()'s timeout: whole milliseconds rounded up, at least 1, at most Int32.max.
    var pollMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(1, total))
    }

    /// This duration in seconds, for messages ("within 1.5 s").
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
