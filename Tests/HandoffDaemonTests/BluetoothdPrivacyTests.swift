import BlueZ
import HandoffDaemon
import Testing

@Suite struct BluetoothdPrivacyTests {
    @Test func debiansShippedFileLeavesPrivacyOff() {
        // As Debian 12 ships it: everything commented out.
        let privacy = BluetoothdPrivacy(
            mainConf: """
                [General]

                # Default adapter name
                #Name = BlueZ
                #Privacy = off

                [LE]
                #MinAdvertisementInterval=
                """)
        #expect(privacy.value == nil)
        #expect(!privacy.isPrivate)
        #expect(privacy.automaticType == .broadcast)
    }

    @Test func deviceOrNetworkPrivacyAllowsConnectableAdvertising() {
        for value in ["device", "network", "on"] {
            let privacy = BluetoothdPrivacy(mainConf: "[General]\nName = laptop\n  Privacy =  \(value)  \n")
            #expect(privacy.value == value)
            #expect(privacy.isPrivate, "Privacy = \(value)")
            #expect(privacy.automaticType == .peripheral)
        }
    }

    /// bluetoothd 5.66 compares exactly: other spellings are off, and "limited"
    /// privacy shows the public address while the adapter is discoverable.
    @Test func onlyWhatBluetoothdReadsAsFullPrivacyCounts() {
        for value in ["Device", "true", "yes", "limited-device", "limited-network", ""] {
            #expect(!BluetoothdPrivacy(mainConf: "[General]\nPrivacy = \(value)\n").isPrivate, "Privacy = \(value)")
        }
    }

    @Test func offOrAnotherGroupDoesNotCount() {
        #expect(!BluetoothdPrivacy(mainConf: "[General]\nPrivacy = off\n").isPrivate)
        #expect(!BluetoothdPrivacy(mainConf: "[General]\nPrivacy=false\n").isPrivate)
        // The key belongs to [General]; the same key elsewhere is not bluetoothd's privacy.
        #expect(!BluetoothdPrivacy(mainConf: "[Policy]\nPrivacy = device\n").isPrivate)
        #expect(!BluetoothdPrivacy(mainConf: "Privacy = device\n").isPrivate)
        // The last assignment wins, as in a GLib key file.
        #expect(!BluetoothdPrivacy(mainConf: "[General]\nPrivacy = device\nPrivacy = off\n").isPrivate)
        #expect(BluetoothdPrivacy(mainConf: "[General]\n#Privacy = off\nPrivacy = device\n").isPrivate)
    }

    /// `[General] TemporaryTimeout` as bluetoothd 5.66 reads it: a whole number of seconds, its default of 30
    /// otherwise (docs/continuation.md 10.6, "BlueZ before 5.73 and long streams").
    @Test func temporaryTimeoutAsBluetoothdReadsIt() {
        let cases: [(String, Int)] = [
            ("[General]\n#TemporaryTimeout = 30\n", 30),
            ("[General]\nTemporaryTimeout = 120\n", 120),
            ("[General]\nPrivacy = device\n  TemporaryTimeout=0\n[GATT]\nChannels = 1\n", 0),
            ("[General]\nTemporaryTimeout = 60\nTemporaryTimeout = 90\n", 90),
            ("[LE]\nTemporaryTimeout = 120\n", 30),
            ("[General]\nTemporaryTimeout = two minutes\n", 30),
            ("[General]\nTemporaryTimeout = -5\n", 30),
            ("", 30),
        ]
        for (text, seconds) in cases {
            #expect(BluetoothdTemporaryTimeout(mainConf: text).seconds == seconds, "\(text)")
        }
    }
}
