/// Told what happens to a `UserActivity` (NSUserActivityDelegate). Every method has
/// a default that does nothing. Methods are called from a task of HandoffKit's own,
/// never on a thread the delegate must not block; keep them short anyway.
public protocol UserActivityDelegate: AnyObject, Sendable {
    /// Another device of the user's account continued the activity.
    /// - Parameter device: the continuing device's per-epoch identifier (8 hex digits).
    func userActivityWasContinued(_ activity: UserActivity, byDevice device: String)

    /// The activity is about to be saved automatically: a last chance to bring its
    /// fields up to date.
    func userActivityWillSave(_ activity: UserActivity)

    /// An automatic save, or publishing the activity again after a reconnection,
    /// failed. The error is a `UserActivityError` or a `HandoffClientError`.
    func userActivity(_ activity: UserActivity, didFailToSave error: any Error)

    /// A continuing device opened a continuation stream to the activity (NSUserActivity's
    /// `userActivity(_:didReceive:outputStream:)`); the activity `supportsContinuationStreams`.
    /// The default puts the stream on `activity.incomingStreams`; a delegate that implements it
    /// owns the stream instead.
    func userActivity(_ activity: UserActivity, didReceive streams: ContinuationStreams)
}

/// The defaults: do nothing, except that streams go to `incomingStreams`.
extension UserActivityDelegate {
    public func userActivityWasContinued(_ activity: UserActivity, byDevice device: String) {}
    public func userActivityWillSave(_ activity: UserActivity) {}
    public func userActivity(_ activity: UserActivity, didFailToSave error: any Error) {}
    public func userActivity(_ activity: UserActivity, didReceive streams: ContinuationStreams) {
        activity.deliverIncoming(streams)
    }
}
