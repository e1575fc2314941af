/// Why an `Exec` value cannot be used.
public struct ExecLineError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// An `Exec` key, split into arguments by the Desktop Entry Specification's rules,
/// with its field codes left to expand (`expand`). Nothing here ever goes through a
/// shell: the expanded arguments are an array for `posix_spawn`.
public struct ExecLine: Sendable, Hashable {
    /// One argument: literal text and field codes, in order.
    public enum Piece: Sendable, Hashable {
        case text(String)
        case code(Character)
    }

    /// The arguments, the program first.
    public var arguments: [[Piece]]

    /// Characters that must be quoted in an argument (the spec's reserved characters).
    static let reserved: Set<Character> = [
        " ", "\t", "\n", "\"", "'", "\\", ">", "<", "~", "|", "&", ";", "$", "*", "?", "#", "(", ")", "`",
    ]
    /// Field codes the spec defines; the deprecated ones expand to nothing.
    static let codes: Set<Character> = ["f", "F", "u", "U", "i", "c", "k", "d", "D", "n", "N", "v", "m"]

    /// Splits `value` (already unescaped as a string) into arguments.
    /// - Throws: `ExecLineError` for an unterminated quote, an unknown field code, a
    ///   reserved character outside quotes, `%F`/`%U`/`%i` inside another argument,
    ///   more than one file or URL code, or an empty command line.
    public init(_ value: String) throws {
        var arguments: [[Piece]] = []
        var current: [Piece] = []
        var text = ""
        var inArgument = false
        var quoted = false
        var fileCodes = 0
        var iterator = Array(value).makeIterator()

        func flushText() {
            if !text.isEmpty { current.append(.text(text)); text = "" }
        }
        func endArgument() {
            flushText()
            if inArgument { arguments.append(current) }
            current = []
            inArgument = false
        }

        while let character = iterator.next() {
            if quoted {
                switch character {
                case "\"": quoted = false
                case "\\":
                    guard let next = iterator.next() else { throw ExecLineError("a backslash at the end of a quoted argument") }
                    guard ["\"", "`", "$", "\\"].contains(next) else {
                        throw ExecLineError("inside quotes, only \\\", \\`, \\$ and \\\\ are escapes (found \\\(next))")
                    }
                    text.append(next)
                default:
                    // Field codes inside quotes are undefined by the spec; they stay literal.
                    text.append(character)
                }
                continue
            }
            switch character {
            case " ", "\t", "\n":
                endArgument()
            case "\"":
                quoted = true
                inArgument = true
            case "%":
                inArgument = true
                guard let code = iterator.next() else { throw ExecLineError("a lone % at the end") }
                if code == "%" { text.append("%"); continue }
                guard Self.codes.contains(code) else { throw ExecLineError("unknown field code %\(code)") }
                if "fFuU".contains(code) { fileCodes += 1 }
                flushText()
                current.append(.code(code))
            default:
                if Self.reserved.contains(character) {
                    throw ExecLineError("the reserved character \(character) must be inside double quotes")
                }
                inArgument = true
                text.append(character)
            }
        }
        if quoted { throw ExecLineError("a double quote is not closed") }
        endArgument()
        guard fileCodes <= 1 else { throw ExecLineError("more than one of %f, %F, %u, %U") }
        for argument in arguments where argument.count > 1 {
            for case .code(let code) in argument where "FUi".contains(code) {
                throw ExecLineError("%\(code) must be an argument on its own")
            }
        }
        guard let program = arguments.first, !program.isEmpty else { throw ExecLineError("no program") }
        if program.contains(where: { if case .code = $0 { true } else { false } }) {
            throw ExecLineError("the program itself cannot be a field code")
        }
        self.arguments = arguments
    }

    /// What the field codes expand to.
    public struct Context: Sendable, Hashable {
        /// For `%f` and `%F`: local file paths.
        public var files: [String]
        /// For `%u` and `%U`: URLs.
        public var urls: [String]
        /// `Icon`, for `%i` (as `--icon ICON`).
        public var icon: String?
        /// `Name`, for `%c`.
        public var name: String
        /// The desktop file's path, for `%k`.
        public var desktopFile: String

        public init(files: [String], urls: [String], icon: String?, name: String, desktopFile: String) {
            self.files = files
            self.urls = urls
            self.icon = icon
            self.name = name
            self.desktopFile = desktopFile
        }
    }

    /// The command line with every field code expanded: an array for `posix_spawn`,
    /// each element one argument whatever characters it holds.
    public func expand(_ context: Context) -> [String] {
        var out: [String] = []
        for argument in arguments {
            if argument.count == 1, case .code(let code) = argument[0] {
                switch code {
                case "F": out += context.files
                case "U": out += context.urls
                case "f": out += context.files.prefix(1)
                case "u": out += context.urls.prefix(1)
                case "i": if let icon = context.icon { out += ["--icon", icon] }
                case "c": out.append(context.name)
                case "k": out.append(context.desktopFile)
                default: break  // deprecated codes expand to nothing
                }
                continue
            }
            var text = ""
            for piece in argument {
                switch piece {
                case .text(let literal): text += literal
                case .code("f"): text += context.files.first ?? ""
                case .code("u"): text += context.urls.first ?? ""
                case .code("c"): text += context.name
                case .code("k"): text += context.desktopFile
                case .code: break
                }
            }
            out.append(text)
        }
        return out
    }

    /// True when the line takes a file (`%f`, `%F`) rather than a URL.
    public var takesFiles: Bool { contains("f") || contains("F") }
    /// True when the line takes a URL (`%u`, `%U`).
    public var takesURLs: Bool { contains("u") || contains("U") }

    func contains(_ code: Character) -> Bool {
        arguments.contains { $0.contains(.code(code)) }
    }
}
