import HandoffProtocol

/// The `streamOpened` events handoffd sends when a continuing device opened a stream to the activity.
extension UserActivity {
    /// A `streamOpened` event for this activity: picks up the app's end of the stream at once (handoffd
    /// waits 30 s for it) and hands it to the delegate, whose default puts it on `incomingStreams`.
    /// A stream whose socket cannot be picked up is dropped: the continuing app sees it end.
    func receive(_ opened: StreamOpenedEvent) async {
        guard let streams = try? await ContinuationStreams.connect(path: opened.path, peerDevice: opened.byDevice)
        else { return }
        if let delegate {
            delegate.userActivity(self, didReceive: streams)
        } else {
            deliverIncoming(streams)
        }
    }

    /// Puts `streams` on `incomingStreams`; after `invalidate()` it is closed instead.
    func deliverIncoming(_ streams: ContinuationStreams) {
        if case .terminated = incomingSink.yield(streams) {
            Task { await streams.close() }
        }
    }
}
