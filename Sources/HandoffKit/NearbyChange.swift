import HandoffProtocol

/// A change to the activities nearby, as `HandoffClient.nearby()` reports it.
public enum NearbyChange: Sendable, Hashable {
    /// An activity is heard for the first time (or again, after it was lost).
    case appeared(NearbyActivity)
    /// It changed: its type became known, its flags or title changed, its device
    /// rotated to a new identity, or its signal strength moved.
    case updated(NearbyActivity)
    /// It is gone: not heard for a while, its device stopped advertising it, or
    /// handoffd restarted and no longer knows it. The activity is its last known state.
    case lost(NearbyActivity)

    /// The activity, whichever the change.
    public var activity: NearbyActivity {
        switch self {
        case .appeared(let activity), .updated(let activity), .lost(let activity): activity
        }
    }
}
