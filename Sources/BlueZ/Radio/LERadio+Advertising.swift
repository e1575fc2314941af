import DBus

/// One of our advertising instances: the object we export for it, and what
/// bluetoothd has of it as far as we know.
struct AdvertisingSlot {
    var advertisement: LEAdvertisement1?
    var registered = false
    /// The payload of the registered advertisement.
    var registeredPayload: [UInt8]?
    /// Its type: a registration of another type than the wanted one is redone.
    var registeredType: LEAdvertisementData.AdvertisingType?
    /// The payload bluetoothd refused as too long, and why: not registered again
    /// until the wanted payload changes or bluetoothd or the adapter does.
    var tooLong: (payload: [UInt8], refusal: AdvertisementTooLong)?
    /// Why the last registration failed otherwise (no free instance, say); cleared by a success.
    var failure: String?

    /// Why the slot is not on the air, if bluetoothd refused it.
    var error: String? { tooLong?.refusal.description ?? failure }
}

/// Keeping bluetoothd's copies of our advertisements in line with what is
/// wanted: per slot, the payload, its type, and whether it may be on the air.
extension LERadio {
    /// Why wanted slots are not on the air, by slot.
    var slotErrors: [Int: String] {
        var errors: [Int: String] = [:]
        for (key, slot) in slots where wanted[key] != nil {
            if let error = slot.error { errors[key] = error }
        }
        return errors
    }

    /// The object path of `slot`'s advertisement: the configured path with its
    /// trailing digits (if any) replaced by the slot number.
    func advertisementPath(slot: Int) -> DBusObjectPath {
        let base = configuration.advertisementPath.rawValue
        let stem = String(base.reversed().drop(while: \.isNumber).reversed())
        // Digits after a valid path's last element (or after the root's slash) keep it valid.
        return try! DBusObjectPath(stem + String(slot))
    }

    /// Registers, renews or unregisters every slot's advertisement on `adapter`,
    /// in ascending slot order. A slot that fails does not stop the others; the
    /// first failure is thrown at the end, for a retry.
    func reconcileAdvertisements(on adapter: Adapter1) async throws {
        var firstFailure: (any Error)?
        for key in Set(wanted.keys).union(slots.keys).sorted() {
            do {
                try await reconcileAdvertisement(slot: key, on: adapter)
            } catch {
                slots[key]?.failure = Self.describe(error)
                if firstFailure == nil { firstFailure = error }
            }
        }
        if let firstFailure { throw firstFailure }
    }

    /// Renewing is unregister-then-register (break before make): on a
    /// controller with extended advertising that gives the new data a new
    /// private address, and the old address never carries it.
    private func reconcileAdvertisement(slot key: Int, on adapter: Adapter1) async throws {
        var slot = slots[key] ?? AdvertisingSlot()
        defer { slots[key] = slot }
        // A refusal holds for the payload it was about only.
        if let tooLong = slot.tooLong, tooLong.payload != wanted[key]?.payload { slot.tooLong = nil }
        guard let wanted = wanted[key] else {
            await unregister(&slot, on: adapter)
            await slot.advertisement?.unexport()
            slot.advertisement = nil
            slot.failure = nil
            return
        }
        // bluetoothd said this payload does not fit: sending it again cannot help.
        let payload = wanted.payload
        if let tooLong = slot.tooLong, tooLong.payload == payload { return }
        if slot.registered && slot.registeredPayload == payload && slot.registeredType == wanted.type { return }
        // Pause our discovery: a legacy controller cannot take the new random
        // address while it scans. pass() resumes it. (When the adapter scans
        // for another program only, StopDiscovery fails harmlessly.) A controller
        // with extended advertising gives each set its own address while it scans,
        // and is left scanning: when the last discovery session ends, bluetoothd
        // before 5.69 removes temporary devices that are not connectable even while
        // connected, which took down a central's link to us (a continuation stream's).
        let extended = manager.advertisingManager(of: adapter.path)?.hasExtendedAdvertising ?? false
        if (scanning || adapter.discovering) && !extended {
            scanning = false
            try? await Adapter1.stopDiscovery(adapter: adapter.path, on: connection)
        }
        let renewing = slot.registered
        await unregister(&slot, on: adapter)
        let data = advertisementData(wanted)
        if let advertisement = slot.advertisement {
            // Unregistered by now: bluetoothd reads the new data when we register it.
            try await advertisement.replace(with: data)
        } else {
            slot.advertisement = try await LEAdvertisement1.export(
                data, at: advertisementPath(slot: key), on: connection
            ) { [weak self] in
                Task { await self?.released(slot: key) }
            }
        }
        guard let advertisement = slot.advertisement else { return }
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
                    error, data: data,
                    maxAdvertisingLength: manager.advertisingManager(of: adapter.path)?.maxAdvertisingLength.map(Int.init))
            else { throw error }
            slot.tooLong = (payload, refusal)
            slot.registered = false
            logger.error("\(refusal)")
            return
        }
        let which = key == 0 ? "" : " (slot \(key))"
        if renewing {
            logger.debug("new data on the air on \(adapter.interfaceName)\(which)")
        } else {
            logger.info("advertising on \(adapter.interfaceName)\(which)")
        }
        slot.registered = true
        slot.registeredPayload = payload
        slot.registeredType = data.type
        slot.failure = nil
        // Whatever kept it off the air (a refusal, a failed pass) is over.
        lastError = nil
    }

    /// Unregisters the slot's advertisement if bluetoothd has it (errors ignored:
    /// it may already be gone with a power cycle or bluetoothd's restart).
    private func unregister(_ slot: inout AdvertisingSlot, on adapter: Adapter1) async {
        if slot.registered, let advertisement = slot.advertisement {
            try? await LEAdvertisingManager1.unregisterAdvertisement(
                advertisement.path, adapter: adapter.path, on: connection)
        }
        slot.registered = false
        slot.registeredPayload = nil
    }

    /// bluetoothd (or the adapter) went: nothing of ours is registered any more,
    /// and its refusals say nothing of the next one.
    func forgetRegistrations() {
        for key in slots.keys {
            slots[key]?.registered = false
            slots[key]?.registeredPayload = nil
            slots[key]?.tooLong = nil
            slots[key]?.failure = nil
        }
    }

    private func advertisementData(_ wanted: RadioAdvertisement) -> LEAdvertisementData {
        LEAdvertisementData(
            type: wanted.type, manufacturerData: [configuration.companyID: wanted.payload],
            minInterval: configuration.minInterval, maxInterval: configuration.maxInterval)
    }
}
