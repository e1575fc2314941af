/// Paths as handoffd's socket options need them, without Foundation's NSString.
enum SocketPath {
    /// The directory part of `path`, as `NSString.deletingLastPathComponent` gives it: repeated
    /// slashes count as one and a trailing slash is ignored; "" for a bare name, "/" for a name
    /// in the root. (Foundation on Linux stumbled on some odd paths: it crashed on a one-letter
    /// name such as "a/", gave "" for "//" and kept a slash of "///a//b///"; these give "", "/"
    /// and "/a", naming the same directories.)
    static func directory(of path: String) -> String {
        var fixed = ""
        for character in path where !(character == "/" && fixed.last == "/") {
            fixed.append(character)
        }
        if fixed.count > 1 && fixed.last == "/" { fixed.removeLast() }
        if fixed == "/" || fixed.isEmpty { return fixed }
        guard let slash = fixed.lastIndex(of: "/") else { return "" }
        if slash == fixed.startIndex { return "/" }
        return String(fixed[..<slash])
    }
}
