// An app launched by handoff-agent to continue an activity: it claims the hand-over
// (the file named by its %u or %f argument, or HANDOFF_CONTINUATION_FILE) and prints it.
// Its desktop entry, org.handoff.example.Reader.desktop, declares the type it handles.
import Foundation
import HandoffKit

do {
    guard let handed = try HandedOverActivity.claim() else {
        print("Not launched to continue an activity. Pick Continue on a handoff-agent notification,")
        print("or run: handoffctl continue ID")
        exit(0)
    }
    let activity = handed.activity
    print("Continued \(activity.type) from device \(activity.device) of account \(activity.account)")
    if let title = activity.title { print("title:   \(title)") }
    if let url = activity.webpage { print("webpage: \(url.absoluteString)") }
    for (key, value) in (activity.userInfo ?? [:]).sorted(by: { $0.key < $1.key }) {
        print("\(key): \(String(decoding: try WireFormat.compactJSON(value), as: UTF8.self))")
    }
} catch {
    FileHandle.standardError.write(Data("handoff-example-reader: \(error)\n".utf8))
    exit(1)
}
