// swift-tools-version: 6.1
//
// handoff: Apple-style Handoff for Linux.
//
// Modules depend only downward (see README.md, "Layout"):
//   CDBus -> DBus -> BlueZ -> HandoffDaemon -> handoffd
//   HandoffCore (pure) -> HandoffStore (key files)
import PackageDescription

let package = Package(
    name: "handoff",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "HandoffCore", targets: ["HandoffCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // MARK: System-library shims (imported only by the module that wraps them)
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),

        // MARK: D-Bus binding
        .target(name: "DBus", dependencies: ["CDBus"]),

        // MARK: BlueZ client: one file per org.bluez interface, plus scanning and advertising
        .target(
            name: "BlueZ",
            dependencies: ["DBus", .product(name: "Logging", package: "swift-log")]
        ),

        // MARK: Beacon format, keys, rotation (pure, no I/O)
        .target(
            name: "HandoffCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // MARK: Account key files on disk (mode 0600, atomic writes)
        .target(
            name: "HandoffStore",
            dependencies: [
                "HandoffCore",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),

        // MARK: Benchmarks and fuzzing (run by `make bench`, `make fuzz`)
        .executableTarget(name: "DBusBench", dependencies: ["DBus"]),
        .executableTarget(name: "BeaconBench", dependencies: ["HandoffCore"]),
        .executableTarget(name: "BeaconFuzz", dependencies: ["HandoffCore"]),

        // MARK: Tests
        .target(name: "DBusTestSupport", dependencies: ["DBus"], path: "Tests/DBusTestSupport"),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "DBus", "DBusTestSupport"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "DBusTestSupport"], resources: [.copy("Peers")]),
        .testTarget(
            name: "HandoffCoreTests",
            dependencies: [
                "HandoffCore",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            resources: [.copy("Vectors")]
        ),
        .testTarget(name: "HandoffStoreTests", dependencies: ["HandoffStore", "HandoffCore"]),
    ],
    swiftLanguageModes: [.v6]
)
