import HandoffProtocol

/// Continuing with a continuation stream to the origin app (docs/protocol.md, "Continuation streams").
extension HandoffClient {
    /// Continues a nearby activity, as `continue(_:timeout:willContinue:)`, and opens a
    /// two-way byte stream to the app that published it (NSUserActivity's
    /// `getContinuationStreams`). Works when that app set `supportsContinuationStreams`
    /// (the nearby activity's `supportsStreams` says so).
    ///
    /// ```swift
    /// let (restored, streams) = try await client.continueWithStreams(nearby)
    /// try await streams.write(Array("send the document\n".utf8))
    /// await streams.finish()
    /// let document = try await streams.inbound.collect(upTo: 16 << 20)
    /// ```
    ///
    /// - Returns: the restored activity and the open stream, whose `peerDevice` is the origin device.
    /// - Throws: as `continue(_:timeout:willContinue:)`; `ContinueError.streamsUnsupported` when the
    ///   origin app does not take streams or a limit on open streams was reached;
    ///   `HandoffClientError.streamConnectFailed` when the stream's socket could not be picked up.
    public func continueWithStreams(
        _ nearby: NearbyActivity, timeout: Duration? = nil, willContinue: (@Sendable (WillContinue) -> Void)? = nil
    ) async throws -> (activity: ContinuedActivity, streams: ContinuationStreams) {
        try await continueWithStreams(nearbyID: nearby.id, timeout: timeout, willContinue: willContinue)
    }

    /// `continueWithStreams(_:timeout:willContinue:)` by the nearby activity's id.
    public func continueWithStreams(
        nearbyID: String, timeout: Duration? = nil, willContinue: (@Sendable (WillContinue) -> Void)? = nil
    ) async throws -> (activity: ContinuedActivity, streams: ContinuationStreams) {
        let (connection, _) = try await core.ready()
        let event = try await connection.continueReturningEvent(
            nearbyID: nearbyID, timeout: timeout, streams: true, willContinue: willContinue)
        let continued = try event.data(as: ContinuedEvent.self)
        guard let stream = continued.stream else {
            throw HandoffClientError.invalidResponse("the \"continued\" event has no stream, though streams were asked for")
        }
        let streams = try await ContinuationStreams.connect(path: stream.path, peerDevice: continued.activity.device)
        return (continued.activity, streams)
    }
}
