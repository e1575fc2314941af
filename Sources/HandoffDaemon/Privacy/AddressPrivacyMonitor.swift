import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffProtocol
import Logging

/// Keeps handoffd's advertisement type in line with LE privacy in the kernel
/// for the adapter in use (see `AddressPrivacyPolicy`).
///
/// It asks the kernel (`KernelPrivacy`) when it starts, whenever bluetoothd
/// comes back, an adapter appears or goes, and an adapter's `Powered`
/// changes: bluetoothd sets privacy when it starts, and the adapter chosen
/// automatically may change with power. It then tells the radio which type
/// to use (a connectable advertisement only with privacy on) and logs the
/// outcome when it changes, once. `status` shows the latest outcome.
///
/// It decides nothing on the air itself: each outcome goes to `apply` as an
/// `AdvertisingPolicy`, which the daemon's advertiser follows.
///
/// The kernel accepts a change of privacy only while the adapter is powered
/// off (Set Privacy is Rejected otherwise), so an answer read while it is
/// powered holds until it is switched off. While there is no adapter, or it is
/// off, the radio is kept at broadcast, before the kernel is even asked: an
/// advertisement registered when it comes back on is non-connectable until
/// the kernel has been asked again.
public actor AddressPrivacyMonitor {
    /// Reads the kernel's privacy state for an adapter; tests stand in for a kernel with Bluetooth here.
    public typealias KernelReader = @Sendable (_ interfaceName: String) async -> KernelPrivacy

    let manager: BlueZObjectManager
    /// Where each policy goes (the daemon); awaited, so that it is in force before the next step.
    let apply: @Sendable (AdvertisingPolicy) async -> Void
    let selector: AdapterSelector
    let configured: LEAdvertisementData.AdvertisingType?
    let mode: AddressPrivacyMode
    let mainConfPath: String
    let readKernel: KernelReader
    let logger: Logger

    /// The latest decision.
    public private(set) var decision: AddressPrivacyPolicy.Decision?
    private var checking = false
    private var checkRequested = false

    public init(
        manager: BlueZObjectManager, selector: AdapterSelector,
        configured: LEAdvertisementData.AdvertisingType?, mode: AddressPrivacyMode = .strict, mainConfPath: String,
        readKernel: @escaping KernelReader = { await KernelPrivacy.read(interfaceName: $0) }, logger: Logger,
        apply: @escaping @Sendable (AdvertisingPolicy) async -> Void
    ) {
        self.manager = manager
        self.apply = apply
        self.selector = selector
        self.configured = configured
        self.mode = mode
        self.mainConfPath = mainConfPath
        self.readKernel = readKernel
        self.logger = logger
    }

    /// What `status` shows.
    public var availability: ContinuationAvailability? { decision?.availability }

    /// Checks now and after every relevant change in bluetoothd, until cancelled.
    public func run() async {
        let (events, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let token = manager.observe { event in
            if Self.mayChangePrivacy(event) { continuation.yield() }
        }
        defer { token.cancel() }
        await check()
        for await _ in events {
            if Task.isCancelled { break }
            await check()
        }
    }

    /// Decides again from the kernel's and main.conf's current word. Checks
    /// asked for while one runs are folded into one more.
    public func check() async {
        if checking {
            checkRequested = true
            return
        }
        checking = true
        defer { checking = false }
        repeat {
            checkRequested = false
            let chosen = manager.isServicePresent ? selector.choose(from: manager.adapters()) : nil
            let powered = chosen?.powered == true
            if !powered {
                await apply(
                    AdvertisingPolicy(
                        advertise: decision?.advertise ?? true, type: .broadcast, availability: decision?.availability))
            }
            let adapter = chosen?.interfaceName
            let kernel: KernelPrivacy = if let adapter { await readKernel(adapter) } else { .unknown("no adapter") }
            let mainConf = (try? String(contentsOfFile: mainConfPath, encoding: .utf8))
                .map(BluetoothdPrivacy.init(mainConf:))
            let policy = AddressPrivacyPolicy(
                configured: configured, mainConf: mainConf, mainConfPath: mainConfPath, mode: mode)
            let extended = chosen.flatMap { manager.advertisingManager(of: $0.path)?.hasExtendedAdvertising }
            let new = policy.decide(adapter: adapter, kernel: kernel, extendedAdvertising: extended)
            note(new)
            await apply(
                AdvertisingPolicy(
                    advertise: new.advertise, type: powered ? new.type : .broadcast, availability: new.availability))
        } while checkRequested && !Task.isCancelled
    }

    private func note(_ new: AddressPrivacyPolicy.Decision) {
        defer { decision = new }
        guard new.availability != decision?.availability else { return }
        logger.log(level: new.level, "\(new.message)")
    }

    private static func mayChangePrivacy(_ event: BlueZObjectManager.Event) -> Bool {
        switch event {
        case .serviceAppeared, .serviceVanished: true
        case .interfacesAdded(_, let interfaces):
            interfaces[Adapter1.interface] != nil || interfaces[LEAdvertisingManager1.interface] != nil
        case .interfacesRemoved(_, let names):
            names.contains(Adapter1.interface) || names.contains(LEAdvertisingManager1.interface)
        case .propertiesChanged(_, let interface, let changed, _, _):
            interface == Adapter1.interface && changed["Powered"] != nil
        }
    }
}
