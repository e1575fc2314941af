// Fuzz entry point for the beacon decoder and the other parsers of untrusted
// input in HandoffCore.
//
// - Fuzzing: `scripts/fuzz.sh` builds this with `-sanitize=fuzzer -DFUZZING`;
//   libFuzzer provides `main` and calls `LLVMFuzzerTestOneInput`.
// - Normal builds: `@main` below replays the files named on the command line
//   through the same function (to reproduce a crash, or as a smoke test).
#if canImport(Glibc)
import Glibc
#endif
import HandoffCore

/// What one fuzz input is run through. Built once; each input gets a copy.
struct FuzzHarness: Sendable {
    /// The first vector's account (secret 00 01 … 1f), epoch length and epoch,
    /// so the seed corpus (the test vectors) contains authentic beacons.
    let account: AccountKey
    let epoch: Epoch
    let now: Double
    let recognizer: BeaconRecognizer

    init() {
        do {
            account = try AccountKey(name: "fuzz", secret: Array(0..<32))
            let type = try ActivityType("org.handoff.example.browse")
            epoch = Epoch(index: 2_900_000, length: 600)
            now = Double(epoch.startSeconds) + 300
            var recognizer = BeaconRecognizer(configuration: BeaconConfiguration(epochLength: epoch.length), accounts: [account])
            recognizer.declareActivityTypes([type])
            recognizer.refresh(now: now)
            self.recognizer = recognizer
        } catch {
            fatalError("fuzz harness setup: \(error)")
        }
    }

    /// Runs one input; traps (a finding) if an invariant breaks.
    func run(_ bytes: UnsafeRawBufferPointer) {
        var recognizer = self.recognizer
        if let beacon = try? recognizer.recognize(bytes: bytes, now: now) {
            // Oracle 1: an accepted beacon re-seals to exactly the same bytes.
            precondition(BeaconCodec.seal(beacon.fields, account: account) == Array(bytes), "re-seal differs")
            // Oracle 2: the same beacon again is a replay.
            do {
                _ = try recognizer.recognize(bytes: bytes, now: now)
                preconditionFailure("replay accepted")
            } catch {
                guard case .replayed = error else { preconditionFailure("replay gave \(error)") }
            }
        }
        _ = try? BeaconCodec.open(bytes, account: account, epoch: epoch)
        _ = BeaconFormat.version(of: bytes)
        _ = BeaconAdvertisement.manufacturerPayload(in: Array(bytes), companyID: 0xFFFF)

        let text = String(decoding: bytes, as: UTF8.self)
        if let file = try? AccountKeyFile.parse(text) {
            // Oracle 3: a parsed key file re-encodes to a file that parses to the same value.
            precondition((try? AccountKeyFile.parse(file.encoded())) == file, "key file round trip differs")
        }
        if let key = try? AccountKeyCode.decode(text, name: "fuzz") {
            // Oracle 4: a decoded export code has exactly one canonical form: its symbols are
            // the encoder's for that secret, and the canonical form decodes to the same key.
            let canonical = AccountKeyCode.encode(key)
            precondition((try? AccountKeyCode.canonical(text)) == canonical, "code is not in canonical form")
            precondition((try? AccountKeyCode.decode(canonical, name: "fuzz")) == key, "code round trip differs")
        }
        _ = try? ActivityType(text)
        _ = try? AccountKey.validate(name: text)
    }
}

let harness = FuzzHarness()

/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    harness.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

#if !FUZZING
/// Replays the files named on the command line through the fuzz function.
@main
struct BeaconFuzzReplay {
    static func main() {
        let paths = CommandLine.arguments.dropFirst()
        if paths.isEmpty {
            print("usage: BeaconFuzz FILE...  (replays inputs; build with scripts/fuzz.sh to fuzz)")
        }
        var failures = 0
        for path in paths {
            guard let bytes = readFile(path) else {
                print("cannot read \(path)")
                failures += 1
                continue
            }
            bytes.withUnsafeBufferPointer { _ = fuzzTestOneInput($0.baseAddress, $0.count) }
            print("ok \(path) (\(bytes.count) bytes)")
        }
        exit(failures == 0 ? 0 : 1)
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return ferror(file) == 0 ? bytes : nil
    }
}
#endif
