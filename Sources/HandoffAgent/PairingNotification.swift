import DBus
import HandoffKit

/// What the notification for a pairing attempt of this user says (docs/desktop.md, "Pairing"): the
/// number to compare, what confirming does, and Confirm / Reject, or, on a server without actions,
/// where to answer instead. The account key never appears: only the number and the account's name.
public enum PairingNotification {
    public static let summary = "Pair with another laptop?"
    public static let confirmLabel = "Confirm"
    public static let rejectLabel = "Reject"
    public static let confirmAction = "confirm"
    public static let rejectAction = "reject"
    public static let category = "x-handoff.pairing"

    /// "189214" as "189 214", easier to compare; anything else (sanitised) as it is.
    public static func grouped(_ number: String) -> String {
        let digits = DisplayText.sanitized(number)
        guard digits.count == 6, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return digits }
        return "\(digits.prefix(3)) \(digits.suffix(3))"
    }

    /// The notification for `event`.
    public static func request(for event: PairNumberEvent, capabilities: Set<String>) -> NotificationRequest {
        let number = grouped(event.number)
        let account = event.account.map(DisplayText.sanitized).flatMap { $0.isEmpty ? nil : $0 }
        let effect: String
        switch event.role {
        case .offer:
            effect = account.map { "the other laptop receives account \($0) and sees its activities" }
                ?? "the other laptop receives your account and sees its activities"
        case .join:
            effect = "this laptop receives the other laptop's account\(account.map { " (as \($0))" } ?? "") and sees its activities"
        case nil:
            effect = "the two laptops share an account"
        }
        let actions = capabilities.contains("actions")
        var body = "The other laptop should show \(number) too. "
        if actions {
            body += "Confirm only if it does: \(effect). Reject if the numbers differ."
        } else {
            body += "Answer in the terminal where handoffctl pair runs: y only if it does (\(effect)), n if the numbers differ."
        }
        if capabilities.contains("body-markup") { body = DisplayText.escapedMarkup(body) }
        let buttons: [(key: String, label: String)] =
            actions ? [(confirmAction, confirmLabel), (rejectAction, rejectLabel)] : []
        return NotificationRequest(
            appName: "Handoff", appIcon: "", summary: summary, body: body, actions: buttons,
            hints: ["category": .string(category)], expireTimeout: 0)
    }
}
