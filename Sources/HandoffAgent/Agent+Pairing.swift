import DBus
import HandoffKit

/// The pairing notification (docs/desktop.md, "Pairing"): a pairing attempt of this user
/// reached its number, was answered, or ended.
extension Agent {
    /// A pairing attempt of this user (`handoffctl pair` in a terminal) reached its number, was answered, or ended.
    func handlePairing(_ change: PairingChange) async {
        switch change {
        case .number(let event):
            guard pairings[event.pairing] == nil else { return }
            logger.info("pairing \(event.pairing): asking the user to compare the numbers")
            pairings[event.pairing] = PairingEntry(event: event)
            await presentPairing(event.pairing)
        case .answered(let event):
            await withdrawPairing(event.pairing)
        case .paired(let event):
            await withdrawPairing(event.pairing)
        case .failed(let event):
            await withdrawPairing(event.pairing)
        case .reconnected:
            for id in pairings.keys { await withdrawPairing(id) }
        }
    }

    func presentPairing(_ pairing: String) async {
        guard let entry = pairings[pairing], !entry.dismissed, let server else { return }
        let request = PairingNotification.request(for: entry.event, capabilities: capabilities)
        do {
            let id = try await server.notify(request, replacing: entry.notification ?? 0)
            if let old = entry.notification, old != id { pairingByNotification[old] = nil }
            pairingByNotification[id] = pairing
            pairings[pairing]?.notification = id
        } catch {
            logger.warning("cannot show the pairing notification: \(error)")
        }
    }

    func withdrawPairing(_ pairing: String) async {
        guard let entry = pairings.removeValue(forKey: pairing), let id = entry.notification else { return }
        pairingByNotification[id] = nil
        do { try await server?.close(id) } catch {
            logger.debug("CloseNotification \(id): \(error)")
        }
    }

    /// Confirm or Reject on a pairing notification: the answer goes to handoffd (`pair.confirm`), and
    /// the notification is withdrawn.
    func pairingAction(_ id: UInt32, _ action: String) async {
        guard let pairing = pairingByNotification[id] else { return }
        let accept: Bool
        switch action {
        case PairingNotification.confirmAction: accept = true
        case PairingNotification.rejectAction: accept = false
        default:
            logger.debug("ignored action \(action) on pairing notification \(id)")
            return
        }
        await withdrawPairing(pairing)
        guard let client else { return }
        logger.info("pairing \(pairing): the user \(accept ? "confirmed" : "rejected") the number")
        let logger = self.logger
        Task {
            do { try await client.answerPairing(pairing, accept: accept) } catch {
                logger.warning("pairing \(pairing): the answer was not taken: \(error)")
            }
        }
    }
}
