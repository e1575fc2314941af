import DBus

extension BluetoothDaemon {
    /// The adapter object's interfaces, with handlers that call back into this actor.
    func makeInterfaces(for adapter: SimulatedAdapter) -> [DBusInterface] {
        [makeAdapterInterface(adapter), makeAdvertisingInterface(adapter), makeGattManagerInterface(adapter)]
            + (configuration.experimental ? [makeMonitorManagerInterface(adapter)] : [])
    }

    private func makeAdapterInterface(_ adapter: SimulatedAdapter) -> DBusInterface {
        let name = adapter.name
        let switches = adapter.switches
        let state = switches.current
        let changes = settingChanges
        /// A Set validator: records the value at once and tells the daemon.
        func setting(_ property: String, check: @escaping @Sendable (DBusValue, AdapterSwitches.State) throws -> Void = { _, _ in },
                     apply: @escaping @Sendable (DBusValue, inout AdapterSwitches.State) -> Void) -> DBusProperty.Validator {
            { value in
                try check(value, switches.current)
                switches.update { apply(value, &$0) }
                changes.yield(SettingChange(adapter: name, property: property, value: value))
            }
        }
        return DBusInterface(
            SimulatedAdapter.adapterInterface,
            methods: [
                DBusMethod("StartDiscovery") { [weak self] call in
                    try await self?.startDiscovery(on: name, sender: call.sender ?? "")
                    return []
                },
                DBusMethod("SetDiscoveryFilter", inputs: "a{sv}", argumentNames: ["properties"]) { [weak self] call in
                    try await self?.setDiscoveryFilter(
                        on: name, sender: call.sender ?? "", call.body[0].dictionaryEntries ?? [])
                    return []
                },
                DBusMethod("StopDiscovery") { [weak self] call in
                    try await self?.stopDiscovery(on: name, sender: call.sender ?? "")
                    return []
                },
                DBusMethod("RemoveDevice", inputs: "o", argumentNames: ["device"]) { [weak self] call in
                    guard case .objectPath(let path) = call.body[0] else { throw BlueZError.invalidArguments() }
                    try await self?.removeDevice(on: name, path: path, sender: call.sender ?? "")
                    return []
                },
                DBusMethod("GetDiscoveryFilters", outputs: "as", argumentNames: ["filters"]) { _ in
                    [.strings(DiscoveryFilter.keys)]
                },
            ],
            properties: [
                DBusProperty("Address", adapter.address.description, changeSignal: .const),
                DBusProperty("AddressType", "public", changeSignal: .const),
                DBusProperty("Name", adapter.systemName),
                DBusProperty(
                    "Alias", type: .string, value: .string(state.alias), access: .readwrite,
                    validate: setting("Alias") { value, state in state.alias = value.string ?? "" }),
                DBusProperty("Class", UInt32(0)),
                DBusProperty(
                    "Powered", type: .boolean, value: .boolean(false), access: .readwrite,
                    validate: setting("Powered") { value, state in state.powered = value.boolean ?? false }),
                DBusProperty(
                    "Discoverable", type: .boolean, value: .boolean(state.discoverable), access: .readwrite,
                    validate: setting(
                        "Discoverable",
                        check: { _, state in
                            // bluetoothd refuses only when a timeout would have to run.
                            if !state.powered && state.discoverableTimeout > 0 {
                                throw BlueZError.failed("Not Powered")
                            }
                        },
                        apply: { value, state in state.discoverable = value.boolean ?? false })),
                DBusProperty(
                    "DiscoverableTimeout", type: .uint32, value: .uint32(state.discoverableTimeout),
                    access: .readwrite,
                    validate: setting("DiscoverableTimeout") { value, state in
                        if case .uint32(let seconds) = value { state.discoverableTimeout = seconds }
                    }),
                DBusProperty(
                    "Pairable", type: .boolean, value: .boolean(state.pairable), access: .readwrite,
                    validate: setting("Pairable") { value, state in state.pairable = value.boolean ?? false }),
                DBusProperty(
                    "PairableTimeout", type: .uint32, value: .uint32(state.pairableTimeout), access: .readwrite,
                    validate: setting("PairableTimeout") { value, state in
                        if case .uint32(let seconds) = value { state.pairableTimeout = seconds }
                    }),
                DBusProperty("Discovering", type: .boolean, value: .boolean(false)),
                DBusProperty("UUIDs", Self.adapterUUIDs),
                DBusProperty("Modalias", Self.modalias),
                DBusProperty("Roles", ["central", "peripheral"]),
            ])
    }

    private func makeAdvertisingInterface(_ adapter: SimulatedAdapter) -> DBusInterface {
        let name = adapter.name
        let limit = UInt8(clamping: configuration.supportedInstances)
        let capabilities = DBusValue.vardict([
            "MaxAdvLen": .byte(UInt8(clamping: configuration.maxAdvertisingLength)),
            "MaxScnRspLen": .byte(UInt8(clamping: configuration.maxAdvertisingLength)),
        ])
        return DBusInterface(
            SimulatedAdapter.advertisingInterface,
            methods: [
                DBusMethod("RegisterAdvertisement", inputs: "oa{sv}", argumentNames: ["advertisement", "options"]) {
                    [weak self] call in
                    guard case .objectPath(let path) = call.body[0] else { throw BlueZError.invalidArguments() }
                    guard let self else { throw BlueZError.failed("bluetoothd is shutting down") }
                    try await self.registerAdvertisement(on: name, sender: call.sender ?? "", path: path)
                    return []
                },
                DBusMethod("UnregisterAdvertisement", inputs: "o", argumentNames: ["service"]) { [weak self] call in
                    guard case .objectPath(let path) = call.body[0] else { throw BlueZError.invalidArguments() }
                    try await self?.unregisterAdvertisement(on: name, sender: call.sender ?? "", path: path)
                    return []
                },
            ],
            properties: [
                DBusProperty("ActiveInstances", UInt8(0)),
                DBusProperty("SupportedInstances", limit),
                DBusProperty("SupportedIncludes", AdvertisementContent.Include.allCases.map(\.rawValue)),
                DBusProperty(
                    "SupportedCapabilities", type: .array(.dictEntry(key: .string, value: .variant)),
                    value: capabilities),
                DBusProperty("SupportedFeatures", [String]()),
            ]
                // bluetoothd offers it only when the kernel reports a secondary PHY,
                // that is, for controllers with extended advertising (btvirt without -L).
                + (configuration.legacyAdvertising ? [] : [DBusProperty("SupportedSecondaryChannels", ["1M", "2M"])])
        )
    }
}
