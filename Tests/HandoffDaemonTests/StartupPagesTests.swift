import Foundation
import Testing

@testable import HandoffDaemon

/// `StartupPages`: which mappings it advises, and that the kernel takes the advice (on this test process's
/// own executable, whose pages come back as the tests run on).
@Suite struct StartupPagesTests {
    static let maps = """
        55d0a0000000-55d0a1ae7000 r-xp 00000000 fe:00 5466682                    /usr/local/bin/handoffd
        55d0a1ae8000-55d0a1b96000 r--p 01ae7000 fe:00 5466682                    /usr/local/bin/handoffd
        55d0a1b96000-55d0a1e5f000 rw-p 01b95000 fe:00 5466682                    /usr/local/bin/handoffd
        55d0a1e5f000-55d0a1f40000 rw-p 00000000 00:00 0
        7f11c0026000-7f11c017b000 r-xp 00026000 fe:00 1310902                    /usr/lib/x86_64-linux-gnu/libc.so.6
        7f11c2000000-7f11c2100000 r--p 00000000 fe:00 5466682                    /usr/local/bin/handoffd (deleted)
        7ffc8a9e1000-7ffc8aa02000 rw-p 00000000 00:00 0                          [stack]
        garbage line
        """

    @Test func onlyTheExecutablesReadOnlyMappingsAreAdvised() {
        let ranges = StartupPages.readOnlyRanges(maps: Self.maps, inode: 5_466_682)
        #expect(
            ranges == [
                0x55d0_a000_0000..<0x55d0_a1ae_7000, 0x55d0_a1ae_8000..<0x55d0_a1b9_6000,
                0x7f11_c200_0000..<0x7f11_c210_0000,
            ])
        #expect(StartupPages.readOnlyRanges(maps: Self.maps, inode: 42).isEmpty)
    }

    @Test func theKernelTakesTheAdviceAndTheResidentFilePagesShrink() throws {
        let released = try StartupPages.release().get()
        #expect(released.advisedBytes > 1 << 20)
        #expect(released.residentBefore > 0)
        #expect(released.residentAfter < released.residentBefore)
    }
}
