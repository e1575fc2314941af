import Foundation
import HandoffAgent
import Testing

struct DisplayTextTests {
    @Test func controlAndBidiCharactersAreStripped() {
        #expect(DisplayText.sanitized("a\u{202A}b\u{202B}c\u{202C}d\u{202D}e\u{202E}f\u{2066}g\u{2067}h\u{2068}i\u{2069}j") == "abcdefghij")
        #expect(DisplayText.sanitized("  x\u{0000}\u{001F}\u{007F}\u{0080}\u{009F}y\n\tz  ") == "xy z")
        // The other bidirectional marks a title may not contain; the Unicode line and paragraph separators.
        #expect(DisplayText.sanitized("a\u{061C}b\u{200E}c\u{200F}d") == "abcd")
        #expect(DisplayText.sanitized("one\u{2028}two\u{2029} three") == "one two three")
        #expect(DisplayText.sanitized("Ünïcode ✓ العربية") == "Ünïcode ✓ العربية")
    }

    @Test func markupIsEscaped() {
        #expect(DisplayText.escapedMarkup("a & b <i>c</i> > d") == "a &amp; b &lt;i&gt;c&lt;/i&gt; &gt; d")
    }
}
