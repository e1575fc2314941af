import DBus

extension LERadio {
    /// Stops our discovery until `resumeDiscovery`, for example while connecting:
    /// the kernel starts an LE connection only when no discovery runs, so with
    /// discovery on, `Device1.Connect` waits for the end of the LE discovery
    /// round (up to 10.24 s; seen on the VM rig). Calls nest.
    public func pauseDiscovery() async {
        discoveryPauses += 1
        guard discoveryPauses == 1 else { return }
        discoveryConfirmed()
        if scanning, let adapter {
            scanning = false
            try? await Adapter1.stopDiscovery(adapter: adapter.path, on: connection)
        }
    }

    /// Ends one `pauseDiscovery`; the last one starts discovery again.
    public func resumeDiscovery() async {
        guard discoveryPauses > 0 else { return }
        discoveryPauses -= 1
        if discoveryPauses == 0 { await reconcile() }
    }
}
