#if canImport(Glibc)
import Glibc
#endif

/// handoffd's start-up pages, handed back to the kernel once the daemon has settled (docs/architecture.md,
/// "Memory").
///
/// Starting touches code and read-only data all over the executable: the dynamic loader's relocation table,
/// argument parsing, the configuration's TOML, the accounts, the first scan, advertisement and GATT
/// registration. Linux maps 64 KiB around each page it faults in (fault-around), so most of the
/// executable's read-only segments end up resident (about 15 MiB of 22 on 2026-11-25), although a daemon
/// that only scans and answers runs a fraction of that code. Once it has settled, handoffd asks the kernel
/// (`madvise(MADV_PAGEOUT)`) to reclaim the read-only pages of its own executable, and marks them
/// `MADV_RANDOM`. Only clean file pages no other process maps are reclaimed; whatever handoffd runs later
/// comes back on first use, from the page cache or the disk, like any page the kernel reclaims under memory
/// pressure, and alone (no read-around). Writable and anonymous
/// memory is untouched. A kernel older than 5.4 (no `MADV_PAGEOUT`) refuses the advice, and nothing changes.
enum StartupPages {
    /// How long after handoffd starts the pages go back: it is ready, and the first scan, the advertisement
    /// and the GATT registration are done, well before.
    static let delay: Duration = .seconds(10)

    /// The outcome of one `release()`: the resident file pages (`RssFile`, KiB) before and after, and how
    /// much was advised.
    struct Released: Sendable, Equatable {
        var residentBefore: Int
        var residentAfter: Int
        var advisedBytes: Int
    }

    /// Advises `MADV_PAGEOUT` over the executable's read-only mappings (from `/proc/self/maps`).
    static func release() -> Result<Released, StartupPagesError> {
        guard let maps = readProcFile("/proc/self/maps") else {
            return .failure(StartupPagesError("cannot read /proc/self/maps: \(String(cString: strerror(errno)))"))
        }
        var executable = stat()
        guard stat("/proc/self/exe", &executable) == 0 else {
            return .failure(StartupPagesError("cannot stat /proc/self/exe: \(String(cString: strerror(errno)))"))
        }
        let ranges = readOnlyRanges(maps: maps, inode: UInt64(executable.st_ino))
        guard !ranges.isEmpty else { return .failure(StartupPagesError("no read-only mapping of the executable")) }
        let before = residentFileKiB()
        var advised = 0
        for range in ranges {
            let start = UnsafeMutableRawPointer(bitPattern: range.lowerBound)
            guard madvise(start, range.count, MADV_PAGEOUT) == 0 else {
                return .failure(StartupPagesError("madvise(MADV_PAGEOUT) refused: \(String(cString: strerror(errno)))"))
            }
            // From now on the code handoffd runs is scattered over the executable: read back only the pages
            // it touches, not the 128 KiB around each (read-around), which the kernel would then map too.
            _ = madvise(start, range.count, MADV_RANDOM)
            advised += range.count
        }
        return .success(Released(residentBefore: before, residentAfter: residentFileKiB(), advisedBytes: advised))
    }

    /// The address ranges of `/proc/self/maps` lines that map the file with inode `inode` without write
    /// permission: `start-end perms offset dev inode path`.
    static func readOnlyRanges(maps: String, inode: UInt64) -> [Range<UInt>] {
        maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, UInt64(fields[4]) == inode, !fields[1].utf8.contains(UInt8(ascii: "w")) else { return nil }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                start < end
            else { return nil }
            return start..<end
        }
    }

    /// `RssFile` of `/proc/self/status` in KiB, or -1.
    static func residentFileKiB() -> Int {
        guard let status = readProcFile("/proc/self/status") else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix("RssFile:") {
            return Int(line.dropFirst("RssFile:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? -1
        }
        return -1
    }

    /// A `/proc` file whole (its size shows as 0, so it is read to the end). Not `String(contentsOfFile:)`:
    /// FoundationEssentials' stops after the first page of a `/proc` file (4037 of 4322 bytes of a
    /// `/proc/PID/maps` on 2026-11-25), and handoffd's maps are several pages long.
    private static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Why the start-up pages stayed.
struct StartupPagesError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
