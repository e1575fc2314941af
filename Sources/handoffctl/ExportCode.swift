/// Printing account export codes so that people can read them aloud.
enum ExportCode {
    /// The code's symbols in groups of four, seven groups to a line.
    static func readable(_ code: String) -> [String] {
        let symbols = code.filter { $0 != "-" && !$0.isWhitespace }.uppercased()
        var groups: [String] = []
        var index = symbols.startIndex
        while index < symbols.endIndex {
            let end = symbols.index(index, offsetBy: 4, limitedBy: symbols.endIndex) ?? symbols.endIndex
            groups.append(String(symbols[index..<end]))
            index = end
        }
        return stride(from: 0, to: groups.count, by: 7).map { groups[$0..<min($0 + 7, groups.count)].joined(separator: " ") }
    }
}
