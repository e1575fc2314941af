import BlueZ
import Testing

@testable import HandoffDaemon

/// `[scan] monitor` and the monitor patterns handoffd asks bluetoothd for.
@Suite struct ScanConfigurationTests {
    @Test func monitorIsAutoByDefaultAndCanBeSwitchedOff() throws {
        #expect(DaemonConfiguration.defaults.scanMonitor)
        let auto = try DaemonConfiguration.parse("[scan]\nmonitor = \"auto\"\n", source: "test.toml")
        #expect(auto.scanMonitor)
        #expect(HandoffService.radioConfiguration(auto).monitorPatterns.count == 17)
        let off = try DaemonConfiguration.parse("[scan]\nmonitor = \"off\"\n", source: "test.toml")
        #expect(!off.scanMonitor)
        #expect(HandoffService.radioConfiguration(off).monitorPatterns.isEmpty)
    }

    @Test func anotherValueIsAnError() {
        for text in ["[scan]\nmonitor = \"on\"\n", "[scan]\nmonitor = true\n"] {
            do {
                _ = try DaemonConfiguration.parse(text, source: "test.toml")
                Issue.record("parsed: \(text)")
            } catch {
                #expect(error.section == "scan")
            }
        }
    }

    /// Every beacon header (version 1, any low nibble) and the pairing header, under the company ID.
    @Test func thePatternsCoverOurHeadersAndNothingElse() {
        let patterns = HandoffService.monitorPatterns(companyID: 0x1234)
        let firstBytes = patterns.map { pattern -> UInt8? in
            guard pattern.adType == 0xFF, pattern.start == 0, pattern.content.count == 3,
                pattern.content[0] == 0x34, pattern.content[1] == 0x12
            else { return nil }
            return pattern.content[2]
        }
        #expect(Set(firstBytes) == Set((0x10...0x1F).map { UInt8($0) } + [0x30]))
        #expect(patterns.allSatisfy { $0.isValid })
    }
}
