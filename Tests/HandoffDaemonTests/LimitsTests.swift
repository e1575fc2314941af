import HandoffCore
import HandoffProtocol
import Testing

/// What `publish` accepts (the socket protocol's limits) must fit what a
/// continuation payload may carry (HandoffCore's): the daemon is where the two
/// meet, and this is where they are held equal. A shared module would put
/// swift-crypto into every app, or the wire format into the pure core.
@Suite struct LimitsTests {
    @Test func publishLimitsAreThePayloadLimits() {
        #expect(ProtocolLimits.maximumTitleBytes == ActivityPayload.maximumTitleBytes)
        #expect(ProtocolLimits.maximumUserInfoBytes == ActivityPayload.maximumUserInfoBytes)
        #expect(ProtocolLimits.maximumURLBytes == ActivityPayload.maximumURLBytes)
    }
}
