import Foundation
import HandoffProtocol

/// Talking to the daemon: bringing its copy of the activity in line with this object.
extension UserActivity {
    enum Intent: Sendable {
        case becomeCurrent, resign, save, invalidate, restore
    }

    /// Brings the daemon's copy in line with this object for `intent`, on the client's
    /// connection, riding out a reconnection: when the connection closes mid-way, the
    /// next connection's restore publishes the activity again, and this tries once more.
    func perform(_ intent: Intent) async throws {
        var closedConnections = 0
        while true {
            let (connection, generation) = try await client.core.ready()
            do {
                await syncLock.lock()
                defer { syncLock.unlock() }
                try await push(intent, on: connection, generation: generation)
                return
            } catch let error as HandoffClientError where error == .connectionClosed && closedConnections < 3 {
                closedConnections += 1
            }
        }
    }

    /// Publishes the activity again on a new connection (called by the client's restore).
    /// - Throws: only `.connectionClosed`; the daemon refusing the activity goes to the delegate.
    func restore(on connection: HandoffConnection, generation: Int) async throws {
        await syncLock.lock()
        defer { syncLock.unlock() }
        do {
            try await push(.restore, on: connection, generation: generation)
        } catch let error as HandoffClientError where error == .connectionClosed {
            throw error
        } catch UserActivityError.expired {
            return  // an expired activity is not advertised any more anyway
        } catch {
            delegate?.userActivity(self, didFailToSave: error)
        }
    }

    /// One round of requests for `intent`. The caller holds `syncLock`.
    private func push(_ intent: Intent, on connection: HandoffConnection, generation: Int) async throws {
        let snapshot = state.withLock { state in
            (state: state, id: state.generation == generation ? state.daemonID : nil)
        }
        let current = snapshot.state
        switch current.phase {
        case .new:
            return
        case .invalidated:
            guard let id = snapshot.id else { return }
            state.withLock { state in
                if state.daemonID == id { state.daemonID = nil }
            }
            // Best effort: a closed connection has dropped it already.
            try? await connection.invalidate(id: id)
            return
        case .current, .resigned:
            break
        }
        let fields = try Fields(current, type: type, now: Date())
        let makeCurrent = current.phase == .current
        let sent = current.sent
        let mustRepublish =
            (sent.title && current.title == nil) || (sent.webpageURL && current.webpageURL == nil)
            || (sent.expiration && current.expirationDate == nil)
        if let id = snapshot.id, !mustRepublish {
            // Made current again since the daemon last heard (a restore may just have published it current).
            let becomesCurrent = makeCurrent && current.sentCurrentOrder != current.currentOrder
            if current.needsSave || becomesCurrent {
                try await connection.update(
                    UpdateParams(
                        id: id, title: fields.title, userInfo: fields.userInfo, webpageURL: fields.webpageURL,
                        expiresIn: fields.expiresIn, requiredUserInfoKeys: fields.requiredUserInfoKeys,
                        becomeCurrent: becomesCurrent ? true : nil,
                        supportsStreams: fields.supportsStreams != sent.supportsStreams ? fields.supportsStreams : nil))
                saved(fields, version: current.version, id: id, generation: generation)
                if becomesCurrent { sentCurrent(current.currentOrder) }
            }
            if intent == .resign, !makeCurrent {
                try await connection.resign(id: id)
            }
        } else {
            // Not published on this connection, or a field must go that `update` cannot remove.
            let id = try await connection.publish(
                PublishParams(
                    type: type, title: fields.title, userInfo: fields.userInfo.isEmpty ? nil : fields.userInfo,
                    webpageURL: fields.webpageURL, expiresIn: fields.expiresIn,
                    requiredUserInfoKeys: fields.requiredUserInfoKeys.isEmpty ? nil : fields.requiredUserInfoKeys,
                    becomeCurrent: makeCurrent, supportsStreams: fields.supportsStreams ? true : nil)
            ).id
            saved(fields, version: current.version, id: id, generation: generation)
            if makeCurrent { sentCurrent(current.currentOrder) }
            client.core.published(self, as: id, generation: generation, replacing: snapshot.id)
            if let old = snapshot.id { try? await connection.invalidate(id: old) }
        }
    }

    /// Records a successful publish or update.
    private func saved(_ fields: Fields, version: UInt64, id: String, generation: Int) {
        state.withLock { state in
            state.daemonID = id
            state.generation = generation
            state.sent = SentFields(
                title: fields.title != nil, webpageURL: fields.webpageURL != nil, expiration: fields.expiresIn != nil,
                supportsStreams: fields.supportsStreams)
            if state.version == version { state.needsSave = false }
        }
    }

    private func sentCurrent(_ order: UInt64) {
        state.withLock { $0.sentCurrentOrder = max($0.sentCurrentOrder, order) }
    }
}
