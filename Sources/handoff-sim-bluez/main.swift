// handoff-sim-bluez: the simulated bluetoothd, as a process (see docs/simulator.md).
import BlueZSimulator
import DBus
import Foundation
import Synchronization

/// Writes one line to stderr.
@Sendable func logLine(_ line: String) {
    FileHandle.standardError.write(Data(("handoff-sim-bluez: " + line + "\n").utf8))
}

let options: CommandLineOptions
do {
    options = try CommandLineOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    logLine("\(error)")
    FileHandle.standardError.write(Data("try 'handoff-sim-bluez --help'\n".utf8))
    exit(2)
}
if options.showHelp {
    print(CommandLineOptions.usage)
    exit(0)
}

var configuration = options.configuration
if !options.quiet { configuration.log = logLine }

let simulator: BlueZSimulator
do {
    simulator = try BlueZSimulator(configuration: configuration)
} catch {
    logLine("\(error)")
    exit(2)
}

// SIGTERM and SIGINT stop the simulator gracefully (Release on every advertisement).
let stoppedBySignal = Atomic<Bool>(false)
let signalSources = installSignalHandlers { [simulator] number in
    guard !stoppedBySignal.exchange(true, ordering: .relaxed) else { return }
    logLine("signal \(number): stopping")
    Task { await simulator.stop(graceful: true) }
}

do {
    try await simulator.start()
} catch {
    logLine("cannot start: \(error)")
    exit(1)
}
let adapters = await simulator.adapterNames.joined(separator: " ")
let readyLine = "handoff-sim-bluez: org.bluez on \(simulator.busAddress) with \(adapters.isEmpty ? "no adapters" : adapters)\n"
FileHandle.standardOutput.write(Data(readyLine.utf8))

await simulator.waitUntilStopped()
withExtendedLifetime(signalSources) {}
exit(stoppedBySignal.load(ordering: .relaxed) ? 0 : 1)
