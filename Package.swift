// swift-tools-version: 6.1
//
// handoff: Apple-style Handoff for Linux.
//
// Modules depend only downward (docs/architecture.md is the map):
//   CDBus -> DBus -> BlueZ -> HandoffDaemon -> handoffd
//   CBluetooth -> BluetoothManagement (kernel mgmt socket) -> HandoffDaemon
//   HandoffCore (pure) -> HandoffStore (key files)
//   HandoffProtocol -> HandoffKit -> handoffctl, HandoffAgent -> handoff-agent
//   DesktopEntries (desktop entry files, pure) -> handoffctl, HandoffAgent
//   HandoffLogging (stderr/journald log lines) -> handoffd, handoff-agent
import PackageDescription

let package = Package(
    name: "handoff",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "HandoffCore", targets: ["HandoffCore"]),
        .library(name: "HandoffKit", targets: ["HandoffKit"]),
        .executable(name: "handoffd", targets: ["handoffd"]),
        .executable(name: "handoffctl", targets: ["handoffctl"]),
        .executable(name: "handoff-sim-bluez", targets: ["handoff-sim-bluez"]),
        .executable(name: "handoff-agent", targets: ["handoff-agent"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // MARK: System-library shims (imported only by the module that wraps them)
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(name: "CBluetooth", providers: [.apt(["libbluetooth-dev"])]),

        // MARK: D-Bus binding
        .target(name: "DBus", dependencies: ["CDBus"]),

        // MARK: BlueZ client: one file per org.bluez interface, plus scanning and advertising
        .target(
            name: "BlueZ",
            dependencies: ["DBus", .product(name: "Logging", package: "swift-log")]
        ),

        // MARK: The kernel's Bluetooth sockets: management (controller settings: LE privacy), LE L2CAP channels
        .target(
            name: "BluetoothManagement",
            dependencies: ["CBluetooth", .product(name: "SystemPackage", package: "swift-system")]
        ),

        // MARK: Beacon format, keys, rotation (pure, no I/O)
        .target(
            name: "HandoffCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // MARK: Account key files on disk (mode 0600, atomic writes)
        .target(
            name: "HandoffStore",
            dependencies: [
                "HandoffCore",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),

        // MARK: The socket protocol between handoffd and apps (spec: docs/protocol.md)
        .target(name: "HandoffProtocol"),

        // MARK: The daemon: registries, beacon service, socket server, config, systemd glue
        .target(
            name: "HandoffDaemon",
            dependencies: [
                "BlueZ", "BluetoothManagement", "DBus", "HandoffCore", "HandoffStore", "HandoffProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        // MARK: What both long-running executables (handoffd, handoff-agent) log through
        .target(name: "HandoffLogging", dependencies: [.product(name: "Logging", package: "swift-log")]),
        .executableTarget(
            name: "handoffd",
            dependencies: [
                "HandoffDaemon", "HandoffLogging", "BlueZ", "DBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: The client side: the app library and the CLI
        .target(
            name: "HandoffKit",
            dependencies: [
                "HandoffProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "handoffctl",
            dependencies: [
                "HandoffKit", "HandoffProtocol", "DesktopEntries",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Desktop entries (X-Handoff-ActivityTypes, Exec lines): read by the agent and by handoffctl
        .target(name: "DesktopEntries"),

        // MARK: The desktop agent: notifications for nearby activities, launching the app that continues them
        .target(
            name: "HandoffAgent",
            dependencies: ["HandoffKit", "DesktopEntries", "DBus", .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "handoff-agent",
            dependencies: [
                "HandoffAgent", "HandoffKit", "HandoffLogging", "DBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Examples (built with everything else, so that they keep compiling)
        .executableTarget(
            name: "handoff-example-viewer",
            dependencies: ["HandoffKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/ViewingURL",
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "handoff-example-reader",
            dependencies: ["HandoffKit"],
            path: "Examples/ContinuedReader",
            exclude: ["README.md", "org.handoff.example.Reader.desktop"]
        ),
        .executableTarget(
            name: "handoff-example-document",
            dependencies: [
                "HandoffKit", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Examples/StreamedDocument",
            exclude: ["README.md"]
        ),

        // MARK: Benchmarks and fuzzing (run by `make bench`, `make fuzz`)
        .executableTarget(name: "DBusBench", dependencies: ["DBus"]),
        .executableTarget(name: "BeaconBench", dependencies: ["HandoffCore"]),
        .executableTarget(name: "ScanBench", dependencies: ["BlueZ", "DBus"]),
        .executableTarget(name: "BeaconFuzz", dependencies: ["HandoffCore"]),
        // The LE L2CAP channel on real Bluetooth (the VM rig: scripts/bench-l2cap.sh); never installed
        .executableTarget(
            name: "handoff-l2cap-probe",
            dependencies: [
                "BluetoothManagement", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "ProtocolFuzz",
            dependencies: ["BlueZ", "HandoffDaemon", "HandoffProtocol", .product(name: "Logging", package: "swift-log")]),

        // MARK: Simulated bluetoothd for tests and demos (shares no code with BlueZ)
        .target(name: "BlueZSimulator", dependencies: ["DBus"]),
        .executableTarget(name: "handoff-sim-bluez", dependencies: ["BlueZSimulator"]),

        // MARK: Tests
        .target(name: "DBusTestSupport", dependencies: ["DBus"], path: "Tests/DBusTestSupport"),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "DBus", "DBusTestSupport"]),
        .testTarget(name: "BlueZSimulatorTests", dependencies: ["BlueZSimulator", "DBus", "DBusTestSupport"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "DBusTestSupport"], resources: [.copy("Peers")]),
        .testTarget(
            name: "HandoffCoreTests",
            dependencies: [
                "HandoffCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "BluetoothManagementTests",
            dependencies: ["BluetoothManagement", .product(name: "SystemPackage", package: "swift-system")]
        ),
        .testTarget(name: "HandoffProtocolTests", dependencies: ["HandoffProtocol"]),
        .testTarget(
            name: "HandoffDaemonTests",
            dependencies: [
                "HandoffDaemon", "BluetoothManagement", "HandoffProtocol", "HandoffCore", "DBusTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(name: "HandoffTestSupport", dependencies: ["HandoffProtocol"], path: "Tests/HandoffTestSupport"),
        .testTarget(name: "HandoffKitTests", dependencies: ["HandoffKit", "HandoffProtocol", "HandoffTestSupport"]),
        .testTarget(
            name: "SystemTests",
            dependencies: ["HandoffProtocol", "HandoffKit", "HandoffCore", "BlueZ", "DBus", "DBusTestSupport"]
        ),
        .testTarget(
            name: "HandoffAgentTests",
            dependencies: [
                "HandoffAgent", "DesktopEntries", "HandoffKit", "HandoffProtocol", "DBus", "DBusTestSupport",
                "HandoffTestSupport",
            ],
            resources: [.copy("Peers")]
        ),
        .testTarget(name: "HandoffStoreTests", dependencies: ["HandoffStore", "HandoffCore"]),
        .testTarget(name: "DesktopEntriesTests", dependencies: ["DesktopEntries"]),
    ],
    swiftLanguageModes: [.v6]
)
