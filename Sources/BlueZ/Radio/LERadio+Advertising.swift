import DBus

/// Keeping bluetoothd's copy of our advertisement in line with what is wanted:
/// the payload, its type, and whether it may be on the air at all.
extension LERadio {
    /// Registers, renews or unregisters the advertisement on `adapter`.
    /// Renewing is unregister-then-register (break before make): on a
    /// controller with extended advertising that gives the new data a new
    /// private address, and the old address never carries it.
    func reconcileAdvertisement(on adapter: Adapter1) async throws {
        // A refusal holds for the payload it was about only.
        if let tooLong, tooLong.payload != wanted?.payload { self.tooLong = nil }
        guard let wanted else {
            await unregisterAdvertisement(on: adapter)
            await advertisement?.unexport()
            advertisement = nil
            return
        }
        // bluetoothd said this payload does not fit: sending it again cannot help.
        let payload = wanted.payload
        if let tooLong, tooLong.payload == payload { return }
        if registered && registeredPayload == payload && registeredType == wanted.type { return }
        // Pause our discovery: a legacy controller cannot take the new random
        // address while it scans. pass() resumes it. (When the adapter scans
        // for another program only, StopDiscovery fails harmlessly.)
        if scanning || adapter.discovering {
            scanning = false
            try? await Adapter1.stopDiscovery(adapter: adapter.path, on: connection)
        }
        let renewing = registered
        await unregisterAdvertisement(on: adapter)
        let data = advertisementData(wanted)
        if let advertisement {
            // Unregistered by now: bluetoothd reads the new data when we register it.
            try await advertisement.replace(with: data)
        } else {
            advertisement = try await LEAdvertisement1.export(
                data, at: configuration.advertisementPath, on: connection
            ) { [weak self] in
                Task { await self?.released() }
            }
        }
        guard let advertisement else { return }
        do {
            try await LEAdvertisingManager1.registerAdvertisement(advertisement.path, adapter: adapter.path, on: connection)
        } catch let error as DBusError where error.is(.bluezAlreadyExists) {
            // Still registered from before (a reply we did not get, a power
            // cycle), perhaps with older data: register it afresh.
            try? await LEAdvertisingManager1.unregisterAdvertisement(
                advertisement.path, adapter: adapter.path, on: connection)
            try await LEAdvertisingManager1.registerAdvertisement(advertisement.path, adapter: adapter.path, on: connection)
        } catch let error as DBusError {
            guard
                let refusal = AdvertisementTooLong(
                    error, data: data, maxAdvertisingLength: manager.advertisingManager(of: adapter.path)?.maxAdvertisingLength.map(Int.init))
            else { throw error }
            tooLong = (payload, refusal)
            registered = false
            logger.error("\(refusal)")
            return
        }
        if renewing {
            logger.debug("new data on the air on \(adapter.interfaceName)")
        } else {
            logger.info("advertising on \(adapter.interfaceName)")
        }
        registered = true
        registeredPayload = payload
        registeredType = data.type
        // Whatever kept it off the air (a refusal, a failed pass) is over.
        lastError = nil
    }

    /// Unregisters our advertisement if bluetoothd has it (errors ignored: it may
    /// already be gone with a power cycle or bluetoothd's restart).
    private func unregisterAdvertisement(on adapter: Adapter1) async {
        if registered, let advertisement {
            try? await LEAdvertisingManager1.unregisterAdvertisement(
                advertisement.path, adapter: adapter.path, on: connection)
        }
        registered = false
        registeredPayload = nil
    }

    private func advertisementData(_ wanted: RadioAdvertisement) -> LEAdvertisementData {
        LEAdvertisementData(
            type: wanted.type, manufacturerData: [configuration.companyID: wanted.payload],
            minInterval: configuration.minInterval, maxInterval: configuration.maxInterval)
    }
}
