/// Why an account key or account name was refused.
public enum AccountKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The secret is not exactly `AccountKey.secretByteCount` bytes long.
    case wrongSecretLength(Int)
    /// The name cannot be used; the name is given escaped, with the problem.
    case invalidName(String, AccountNameProblem)

    /// The problem, with the offending name escaped.
    public var description: String {
        switch self {
        case .wrongSecretLength(let count):
            "an account secret must be \(AccountKey.secretByteCount) bytes, not \(count)"
        case .invalidName(let name, let problem):
            "invalid account name \(String(reflecting: name)): \(problem)"
        }
    }
}
