import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns SIGINT and SIGTERM into an async value, so a command can clean up before it exits.
final class SignalWatcher: @unchecked Sendable {
    // @unchecked: the sources are set up once in init and only cancelled after.
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Int32>

    /// Stops the default action of `signals` (ending the process) and watches for them instead.
    init(_ signals: [Int32] = [SIGINT, SIGTERM]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }

    /// The next signal; nil when the waiting task is cancelled.
    func next() async -> Int32? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}
