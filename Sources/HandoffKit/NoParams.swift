/// The parameters of a request that takes none: encodes as `{}`.
struct NoParams: Encodable, Sendable {}
