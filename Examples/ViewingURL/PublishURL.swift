import ArgumentParser
import Foundation
import HandoffKit

/// Laptop A: "I am viewing this URL."
struct PublishURL: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish \"viewing URL\" as this laptop's current activity, until Ctrl-C.")

    @OptionGroup var options: SocketOption

    @Option(help: "The http or https URL you are viewing.")
    var url: String

    @Option(help: "The title your other laptops show (default: the URL's host).")
    var title: String?

    func run() async throws {
        let client = HandoffClient(app: Viewer.appName, socketPath: options.socket)
        let activity = UserActivity(type: Viewer.activityType, client: client)
        activity.title = title ?? URL(string: url)?.host ?? url
        activity.webpageURL = URL(string: url)
        try activity.setUserInfo(Viewing(url: url, scroll: 0))
        activity.requiredUserInfoKeys = ["url"]
        do {
            try await activity.becomeCurrent()  // checks the fields, then handoffd advertises it
        } catch {
            throw ViewerError(description: "cannot publish: \(error)")
        }
        say("Viewing \(url) (activity \(activity.publishedID ?? "?")); Ctrl-C to stop.")

        // Told when the other laptop continues it (NSUserActivity's userActivityWasContinued).
        // If handoffd restarts meanwhile, the client reconnects and publishes it again.
        for await notice in activity.wasContinuedEvents() {
            say("Continued on device \(notice.byDevice).")
        }
    }
}
