#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Immutable secret bytes in their own allocation, zeroed when released.
///
/// swift-crypto's `SymmetricKey` is not `Sendable` on Linux, so account
/// secrets live here instead. `@unchecked Sendable` is sound: the bytes are
/// written once in `init` and only read afterwards.
final class SecretBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// Copies `bytes` into a fresh allocation.
    init(_ bytes: some Collection<UInt8>) {
        storage = .allocate(byteCount: bytes.count, alignment: 8)
        storage.copyBytes(from: bytes)
    }

    deinit {
        // Zero before freeing, with a call the optimizer may not elide.
        if let base = storage.baseAddress {
            #if canImport(Darwin)
            _ = memset_s(base, storage.count, 0, storage.count)
            #elseif canImport(Glibc) || canImport(Musl)
            explicit_bzero(base, storage.count)
            #else
            for index in storage.indices { storage[index] = 0 }
            #endif
        }
        storage.deallocate()
    }

    /// Number of bytes.
    var count: Int { storage.count }

    /// Calls `body` with the bytes.
    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(storage))
    }
}
