import CBluetooth
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A listening LE L2CAP connection-oriented channel on a dynamic PSM that the kernel
/// picked (0x0080…0x00FF), bound to one adapter's identity address.
///
/// `accept()` waits on a thread of its own with poll() (DescriptorWait), never on
/// Swift's cooperative pool and never in sleeps; `close()` wakes every waiting accept,
/// which then fails with `.closed`, and cancelling the waiting task ends it with
/// `.cancelled`. The socket and the wake descriptor are closed when the last accept has
/// left after `close()` (or at once when none is waiting), so no thread ever polls a
/// closed descriptor number.
public final class L2CAPListener: Sendable {
    /// The PSM the kernel assigned.
    public let psm: UInt16
    /// The adapter address it is bound to (nil only in tests over other socket families).
    public let local: LEAddress?
    private let socket: Int32
    private let wake: Int32
    private let state = Mutex(State())
    private let makeChannel: @Sendable (Int32, sockaddr_l2) throws(L2CAPError) -> L2CAPChannel

    private struct State {
        var closed = false
        var accepting = 0
        var released = false
    }

    /// Listens on a dynamic LE PSM at `adapter`, the identity address and type of the adapter
    /// (bluetoothd's `Adapter1.Address` and `AddressType`). `receiveMTU` is the most bytes the
    /// peer may put in one SDU; `backlog` how many connections may wait for `accept()`.
    public static func listen(
        on adapter: LEAddress, receiveMTU: Int = L2CAPChannel.defaultReceiveMTU, backlog: Int32 = 4
    ) throws(L2CAPError) -> L2CAPListener {
        let socket = try L2CAPSocket.open(boundTo: adapter, receiveMTU: receiveMTU)
        var address = sockaddr_l2()
        var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard named == 0 else {
            let error = errno
            Glibc.close(socket)
            throw .system(call: "getsockname(L2CAP)", errno: error)
        }
        let psm = cbluetooth_l2cap_psm(&address)
        guard L2CAPSocket.dynamicPSMs.contains(psm) else {
            Glibc.close(socket)
            throw .psmOutOfRange(psm)
        }
        guard Glibc.listen(socket, backlog) == 0 else {
            let error = errno
            Glibc.close(socket)
            throw .system(call: "listen(L2CAP PSM \(L2CAPError.hex(psm)))", errno: error)
        }
        return try L2CAPListener(socket: socket, psm: psm, local: adapter) { descriptor, peer throws(L2CAPError) in
            try L2CAPSocket.channel(descriptor, peer: L2CAPSocket.leAddress(peer))
        }
    }

    /// Takes over a listening, non-blocking `socket` (tests use other socket families).
    init(
        socket: Int32, psm: UInt16, local: LEAddress?,
        makeChannel: @escaping @Sendable (Int32, sockaddr_l2) throws(L2CAPError) -> L2CAPChannel
    ) throws(L2CAPError) {
        let wake = cbluetooth_eventfd()
        guard wake >= 0 else {
            let error = errno
            Glibc.close(socket)
            throw .system(call: "eventfd", errno: error)
        }
        self.socket = socket
        self.psm = psm
        self.local = local
        self.wake = wake
        self.makeChannel = makeChannel
    }

    /// The next incoming channel. Fails with `.closed` once `close()` was called.
    public func accept() async throws(L2CAPError) -> L2CAPChannel {
        let entered = state.withLock { state in
            guard !state.closed else { return false }
            state.accepting += 1
            return true
        }
        guard entered else { throw .closed }
        defer { leave() }
        while true {
            var address = sockaddr_l2()
            let descriptor = cbluetooth_accept_l2cap(socket, &address)
            if descriptor >= 0 { return try makeChannel(descriptor, address) }
            let error = errno
            guard [EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED].contains(error) else {
                throw .system(call: "accept(L2CAP PSM \(L2CAPError.hex(psm)))", errno: error)
            }
            switch await DescriptorWait.wait(for: socket, events: Int16(POLLIN), wake: wake) {
            case .ready, .timedOut: continue
            case .woken: throw .closed
            case .cancelled: throw .cancelled
            case .failed(let error): throw .system(call: "poll(L2CAP listener)", errno: error)
            }
        }
    }

    /// Stops listening: nobody can connect to the PSM any more, and waiting accepts fail with `.closed`.
    public func close() {
        let releaseNow = state.withLock { state in
            if state.closed { return false }
            state.closed = true
            if state.accepting > 0 {
                cbluetooth_eventfd_signal(wake)
                return false
            }
            state.released = true
            return true
        }
        if releaseNow { release() }
    }

    private func leave() {
        let releaseNow = state.withLock { state in
            state.accepting -= 1
            guard state.closed, state.accepting == 0, !state.released else { return false }
            state.released = true
            return true
        }
        if releaseNow { release() }
    }

    private func release() {
        Glibc.close(socket)
        Glibc.close(wake)
    }

    deinit {
        // No accept can be running (it holds a reference); close() may not have been called.
        if !state.withLock({ $0.released }) { release() }
    }
}
