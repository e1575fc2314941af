import BluetoothManagement
import Glibc

/// The real `StreamTransport` (docs/continuation.md, section 10.8): LE L2CAP connection-oriented channels
/// (`BT_MODE_LE_FLOWCTL`) through `BluetoothManagement`'s `L2CAPListener` and `L2CAPConnector`, bound to
/// this laptop's adapter (`Adapter1.Address` and `AddressType`) and connecting to the peer as its
/// `Device1.Address` and `AddressType` give it.
struct L2CAPStreamTransport: StreamTransport {
    /// The adapter's identity address, for binding both listening and connecting sockets.
    let adapter: LEAddress

    /// - Throws: `StreamTransportError.system(call: "adapter address", errno: EINVAL)` when BlueZ's
    ///   address or type does not parse.
    init(adapterAddress: String, addressType: String) throws {
        do {
            adapter = try LEAddress(adapterAddress, type: addressType)
        } catch {
            throw StreamTransportError.system(call: "adapter address", errno: EINVAL)
        }
    }

    func listen() async throws -> any StreamTransportListener {
        do {
            return L2CAPStreamListener(listener: try L2CAPListener.listen(on: adapter))
        } catch {
            throw Self.map(error, psm: 0)
        }
    }

    func connect(to peer: StreamPeer, psm: UInt16, timeout: Duration) async throws -> StreamTransportChannel {
        let remote: LEAddress
        do {
            remote = try LEAddress(peer.address, type: peer.addressType)
        } catch {
            throw StreamTransportError.system(call: "peer address", errno: EINVAL)
        }
        do {
            let channel = try await L2CAPConnector.connect(from: adapter, to: remote, psm: psm, timeout: timeout)
            return StreamTransportChannel(descriptor: channel.descriptor, sendUnit: channel.sendMTU)
        } catch {
            throw Self.map(error, psm: psm)
        }
    }

    /// The seam's errors for `BluetoothManagement`'s.
    static func map(_ error: L2CAPError, psm: UInt16) -> StreamTransportError {
        switch error {
        case .kernelHasNoBluetooth: .noBluetooth
        case .invalidAddress: .system(call: "L2CAP address", errno: EINVAL)
        case .psmOutOfRange: .noFreePSM
        case .system(let call, let errno): .system(call: call, errno: errno)
        case .connectFailed(_, _, let errno) where errno == ECONNREFUSED: .refused(psm: psm)
        case .connectFailed(_, _, let errno): .system(call: "connect(L2CAP)", errno: errno)
        case .timedOut: .timedOut(psm: psm)
        case .closed, .cancelled: .closed
        }
    }
}

/// A listening PSM of `L2CAPStreamTransport`.
struct L2CAPStreamListener: StreamTransportListener {
    let listener: L2CAPListener

    var psm: UInt16 { listener.psm }

    func accept() async throws -> StreamTransportChannel {
        do {
            let channel = try await listener.accept()
            return StreamTransportChannel(descriptor: channel.descriptor, sendUnit: channel.sendMTU)
        } catch {
            throw L2CAPStreamTransport.map(error, psm: listener.psm)
        }
    }

    func close() { listener.close() }
}
