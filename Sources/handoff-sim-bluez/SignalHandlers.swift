import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Delivers SIGTERM and SIGINT to `handler` on a private queue, through
/// DispatchSource (no polling). Keep the returned sources alive.
func installSignalHandlers(_ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
    let queue = DispatchQueue(label: "handoff-sim-bluez.signals")
    return [SIGTERM, SIGINT].map { number in
        // Ignored first, so the default action (exit) does not run before the source sees it.
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler { handler(number) }
        source.resume()
        return source
    }
}
