extension ConnectionCore {
    /// A signal subscription: `deliver` runs on the loop thread for each match,
    /// `finish` once when the connection closes. A class: every signal walks
    /// the subscriptions, and a struct would copy the rule's strings each time.
    final class Subscription: Sendable {
        let rule: DBusMatchRule
        /// The rule's `sender` is a well-known name other than the bus's, so a
        /// signal from its current owner (a unique name) matches too.
        let sendsThroughOwner: Bool
        /// `rule.isHeaderOnly`.
        let isHeaderOnly: Bool
        /// Takes the decoded message; nil for a reader subscription.
        let deliver: (@Sendable (DBusMessage) -> Void)?
        /// Reads the message in place (`addSignalHandler(matching:reader:)`).
        let read: (@Sendable (DBusMessageReader) -> Void)?
        let finish: @Sendable (DBusError) -> Void

        init(
            rule: DBusMatchRule, deliver: @escaping @Sendable (DBusMessage) -> Void,
            finish: @escaping @Sendable (DBusError) -> Void
        ) {
            self.rule = rule
            self.deliver = deliver
            self.read = nil
            self.finish = finish
            (sendsThroughOwner, isHeaderOnly) = Self.facts(of: rule)
        }

        init(
            rule: DBusMatchRule, read: @escaping @Sendable (DBusMessageReader) -> Void,
            finish: @escaping @Sendable (DBusError) -> Void
        ) {
            self.rule = rule
            self.deliver = nil
            self.read = read
            self.finish = finish
            (sendsThroughOwner, isHeaderOnly) = Self.facts(of: rule)
        }

        private static func facts(of rule: DBusMatchRule) -> (sendsThroughOwner: Bool, isHeaderOnly: Bool) {
            let sender = rule.sender
            let throughOwner = sender.map { !$0.hasPrefix(":") && $0 != DBusConnection.busName } ?? false
            return (throughOwner, rule.isHeaderOnly)
        }
    }
}
