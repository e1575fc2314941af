import CBluetooth

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Opens LE L2CAP connection-oriented channels to a peer's PSM.
public enum L2CAPConnector {
    /// Connects from the adapter whose identity address is `local` (bluetoothd's
    /// `Adapter1.Address` and `AddressType`) to `psm` at `peer` (`Device1.Address` and
    /// `AddressType`: a private address as bluetoothd learnt it). Uses the LE link to the
    /// peer if there is one (for example bluetoothd's GATT connection), else creates it.
    /// Non-blocking connect, then a poll() for writable on a thread of its own, at most
    /// `timeout`; cancelling the task ends the wait with `.cancelled`.
    public static func connect(
        from local: LEAddress, to peer: LEAddress, psm: UInt16, timeout: Duration, receiveMTU: Int = L2CAPChannel.defaultReceiveMTU
    ) async throws(L2CAPError) -> L2CAPChannel {
        guard L2CAPSocket.dynamicPSMs.contains(psm) else { throw .psmOutOfRange(psm) }
        let socket = try L2CAPSocket.open(boundTo: local, receiveMTU: receiveMTU)
        var address = L2CAPSocket.address(peer, psm: psm)
        let started = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
            }
        }
        if started == 0 { return try L2CAPSocket.channel(socket, peer: peer) }
        let error = errno
        guard error == EINPROGRESS || error == EAGAIN else {
            Glibc.close(socket)
            throw .connectFailed(peer: peer.description, psm: psm, errno: error)
        }
        let outcome = await DescriptorWait.wait(for: socket, events: Int16(POLLOUT), timeout: timeout)
        switch outcome {
        case .ready(let revents):
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else {
                let error = errno
                Glibc.close(socket)
                throw .system(call: "getsockopt(SO_ERROR)", errno: error)
            }
            if failure == 0 && revents & Int16(POLLOUT) == 0 { failure = ENOTCONN }
            guard failure == 0 else {
                Glibc.close(socket)
                throw .connectFailed(peer: peer.description, psm: psm, errno: failure)
            }
            return try L2CAPSocket.channel(socket, peer: peer)
        case .timedOut:
            Glibc.close(socket)
            throw .timedOut(peer: peer.description, psm: psm, seconds: timeout.inSeconds)
        case .cancelled, .woken:
            Glibc.close(socket)
            throw .cancelled
        case .failed(let error):
            Glibc.close(socket)
            throw .system(call: "poll(L2CAP connect)", errno: error)
        }
    }
}
