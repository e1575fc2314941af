/// The `UserActivity` objects to publish again after a reconnection, and their daemon ids.
extension ClientCore {
    /// The next `becomeCurrent` order number.
    func nextCurrentOrder() -> UInt64 {
        inner.withLock { state in
            state.currentOrder += 1
            return state.currentOrder
        }
    }

    /// Keeps `activity` for restoring after a reconnection.
    func track(_ activity: UserActivity) {
        inner.withLock { $0.activities[ObjectIdentifier(activity)] = WeakActivity(activity: activity) }
    }

    /// Stops restoring an activity (invalidated, or gone).
    func untrack(_ identifier: ObjectIdentifier, publishedAs id: String?) {
        inner.withLock { state in
            state.activities[identifier] = nil
            if let id { state.published[id] = nil }
        }
    }

    /// Records the daemon's id for `activity` on `generation` (for `wasContinued`).
    func published(_ activity: UserActivity, as id: String, generation: Int, replacing old: String?) {
        inner.withLock { state in
            guard state.generation == generation else { return }
            if let old { state.published[old] = nil }
            state.published[id] = WeakActivity(activity: activity)
        }
    }

    /// Invalidates an activity whose object went away, if its connection is still the current one.
    func invalidateLeftover(_ id: String, generation: Int) async {
        let connection = inner.withLock { state -> HandoffConnection? in
            if case .ready(let connection, let current) = state.phase, current == generation { return connection }
            return nil
        }
        try? await connection?.invalidate(id: id)
    }
}
