import DBus
import DesktopEntries
import Foundation
import HandoffKit
import Logging

/// Continue, picked on a notification: continue the activity through handoffd and hand it
/// to the app that declared its type (docs/desktop.md).
extension Agent {
    func startContinue(_ activity: NearbyActivity) {
        guard let client, entries[activity.id]?.continuing == false else { return }
        entries[activity.id]?.continuing = true
        logger.info("continuing \(activity.id) (\(activity.type ?? "type unknown"))")
        let nearbyID = activity.id
        Task { [weak self] in
            let started = ContinuationName()
            do {
                let restored = try await client.continue(nearbyID: nearbyID) { will in started.set(will.continuation) }
                self?.submit(.continued(nearbyID: nearbyID, .success(restored), continuation: started.value))
            } catch {
                self?.submit(.continued(nearbyID: nearbyID, .failure(ContinueAttemptError(message: "\(error)")), continuation: started.value))
            }
        }
    }

    /// Gives the restored activity to its app, or its web page to the browser.
    func handOver(_ activity: ContinuedActivity, continuation: String, nearbyID: String) async {
        do {
            if let app = index.byType[activity.type] {
                let file = try handOvers.write(
                    HandedOverActivity(continuation: continuation, nearbyID: nearbyID, activity: activity))
                let done = try await launcher.launch(app, handOver: file, session: server?.connection)
                logger.info("continued \(nearbyID): \(done)")
            } else if activity.webpage != nil, let url = activity.webpageURL {
                try launcher.openWebpage(url)
                logger.info("continued \(nearbyID): opened its web page")
            } else {
                logger.info("continued \(nearbyID): no desktop entry declares \(activity.type); a running app that declared it received it")
            }
            await dismiss(nearbyID)
        } catch {
            logger.error("cannot hand \(nearbyID) over: \(error)")
            await showFailure("\(error)", nearbyID: nearbyID)
        }
    }
}
