/// The version of handoff: handoffd, handoffctl and HandoffKit print it, and
/// `make deb` reads it from this file (the one place it is written).
///
/// It follows semantic versioning; CHANGELOG.md says what changed in each.
public enum HandoffVersion {
    public static let current = "0.2.0"
}
