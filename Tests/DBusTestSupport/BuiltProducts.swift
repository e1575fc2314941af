import Foundation

/// The executables `swift build` made next to the test bundle.
public enum BuiltProducts {
    /// The build products directory (`.build/<triple>/debug`).
    public static var directory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The path of the built executable `name`.
    /// - Throws: `TestFailure` naming the build step when it is missing.
    public static func path(of name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw TestFailure("\(url.path) is missing: build it first (swift build --build-tests builds every product)")
        }
        return url.path
    }
}
