// The protocol's types (NearbyActivity, ContinuedActivity, JSONValue, …) are part of
// HandoffKit's API: `import HandoffKit` is all an app needs.
@_exported import HandoffProtocol
