import BluetoothManagement
import Foundation
import SystemPackage

/// Blocking reads and writes on a connected channel: writes cut into SDUs of at most the
/// send MTU, reads with a buffer of the receive MTU (one SDU each).
struct SDUChannel {
    let channel: L2CAPChannel
    private var buffer: [UInt8] = []
    private var pending: ArraySlice<UInt8> = []

    init(_ channel: L2CAPChannel) {
        self.channel = channel
        buffer = [UInt8](repeating: 0, count: channel.receiveMTU)
    }

    func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + channel.sendMTU)
            let written = try bytes[offset..<end].withUnsafeBytes { try channel.descriptor.write($0, retryOnInterrupt: true) }
            guard written == end - offset else { throw ProbeFailure("a write sent \(written) of \(end - offset) bytes") }
            offset = end
        }
    }

    func writeAll(patternBytes count: Int, seed: UInt64) throws {
        var pattern = Pattern(seed: seed)
        var left = count
        var sdu = [UInt8](repeating: 0, count: channel.sendMTU)
        while left > 0 {
            let size = min(left, channel.sendMTU)
            for index in 0..<size { sdu[index] = pattern.next() }
            let written = try sdu[0..<size].withUnsafeBytes { try channel.descriptor.write($0, retryOnInterrupt: true) }
            guard written == size else { throw ProbeFailure("a write sent \(written) of \(size) bytes") }
            left -= size
        }
    }

    /// One SDU (nil at the end of the channel).
    mutating func readSDU() throws -> ArraySlice<UInt8>? {
        if !pending.isEmpty {
            defer { pending = [] }
            return pending
        }
        let count = try buffer.withUnsafeMutableBytes { try channel.descriptor.read(into: $0, retryOnInterrupt: true) }
        return count == 0 ? nil : buffer[0..<count]
    }

    mutating func readExactly(_ count: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < count {
            guard let sdu = try readSDU() else { throw ProbeFailure("the channel ended after \(bytes.count) of \(count) bytes") }
            let take = min(sdu.count, count - bytes.count)
            bytes += sdu.prefix(take)
            if take < sdu.count { pending = ArraySlice(sdu.dropFirst(take)) }
        }
        return bytes
    }

    /// Reads `count` bytes and compares them with the pattern: the first differing offset and the read it
    /// came in, when the first byte arrived, and how many reads it took. With `pause`, it sleeps
    /// `milliseconds` after every `every` reads (a slow reader).
    mutating func checkPattern(count: Int, seed: UInt64, pause: (every: Int, milliseconds: Int)? = nil) throws
        -> (mismatch: Int?, mismatchRead: Int?, firstByte: Date?, reads: Int)
    {
        var pattern = Pattern(seed: seed)
        var offset = 0
        var mismatch: Int?
        var mismatchRead: Int?
        var firstByte: Date?
        var reads = 0
        while offset < count {
            guard let sdu = try readSDU() else { throw ProbeFailure("the channel ended after \(offset) of \(count) bytes") }
            if firstByte == nil { firstByte = Date() }
            reads += 1
            let take = min(sdu.count, count - offset)
            for byte in sdu.prefix(take) {
                if byte != pattern.next() && mismatch == nil { (mismatch, mismatchRead) = (offset, reads) }
                offset += 1
            }
            if take < sdu.count { pending = ArraySlice(sdu.dropFirst(take)) }
            if let pause, reads % pause.every == 0 {
                var left = timespec(tv_sec: pause.milliseconds / 1000, tv_nsec: (pause.milliseconds % 1000) * 1_000_000)
                var rest = timespec()
                while nanosleep(&left, &rest) != 0 && errno == EINTR { left = rest }
            }
        }
        return (mismatch, mismatchRead, firstByte, reads)
    }

    /// Reads until the peer closes; the number of bytes that came meanwhile.
    mutating func readToEnd() throws -> Int {
        var count = 0
        while let sdu = try readSDU() { count += sdu.count }
        return count
    }
}
