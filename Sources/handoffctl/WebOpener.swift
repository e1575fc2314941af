import Foundation
import HandoffKit
import HandoffProtocol

/// Opens a continued activity's webpage URL in the user's browser with `xdg-open`.
///
/// Only `http` and `https` URLs with a host are opened, as Handoff allows; the URL
/// is passed as one argument to `xdg-open`, started directly (no shell), so nothing
/// in it is interpreted.
enum WebOpener {
    /// Why the page was not opened, in words for the user.
    struct Failure: Error {
        var message: String
    }

    /// The program that opens URLs.
    static let program = "xdg-open"

    /// Opens `activity`'s webpage URL and waits for `xdg-open` to finish.
    /// - Throws: `Failure` when there is no URL, its scheme is not http or https,
    ///   `xdg-open` is not installed, or it fails.
    static func open(_ activity: ContinuedActivity) async throws {
        guard let text = activity.webpageURL else {
            throw Failure(message: "the activity has no webpage URL, so there is nothing to open")
        }
        guard let url = activity.webpage else {
            throw Failure(
                message: "refusing to open \(String(reflecting: Terminal.singleLine(text, limit: 200))): "
                    + "only http and https URLs are opened")
        }
        guard let executable = ChildProcess.findInPath(program) else {
            throw Failure(
                message: "cannot open \(url.absoluteString): \(program) is not installed (apt install xdg-utils)")
        }
        let status: Int32
        do {
            status = try await ChildProcess.run(executable, [url.absoluteString])
        } catch {
            throw Failure(message: "cannot run \(executable.path): \(error.localizedDescription)")
        }
        guard status == 0 else {
            throw Failure(message: "\(program) could not open \(url.absoluteString) (exit status \(status))")
        }
    }
}
