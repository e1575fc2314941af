/// RFC 3339 UTC timestamps (`2025-06-15T14:06:40Z`) without Foundation.
///
/// Uses the proleptic Gregorian calendar; only the years 1970 through 9999
/// are accepted, which is all an account key file needs.
enum UTCTimestamp {
    /// Formats seconds since the Unix epoch (clamped to year 9999).
    static func format(_ seconds: UInt64) -> String {
        let clamped = min(seconds, latest)
        let days = Int64(clamped / 86_400)
        let secondOfDay = Int(clamped % 86_400)
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        let time = "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
        return "\(yearText)-\(two(month))-\(two(day))T\(time)Z"
    }

    /// Parses exactly `YYYY-MM-DDTHH:MM:SSZ`; nil if malformed or out of range.
    static func parse(_ text: some StringProtocol) -> UInt64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            year >= 1970, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        return UInt64(days) * 86_400 + UInt64(hour * 3600 + minute * 60 + second)
    }

    /// 9999-12-31T23:59:59Z.
    static let latest: UInt64 = 253_402_300_799

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a date (year >= 1970).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int64 {
        // Whole years, then whole months, then days: simple and exact for this range.
        let yearsBefore = year - 1970
        let leapYearsBefore = (year - 1) / 4 - (year - 1) / 100 + (year - 1) / 400 - (1969 / 4 - 1969 / 100 + 1969 / 400)
        var days = yearsBefore * 365 + leapYearsBefore
        for earlier in 1..<month { days += daysIn(month: earlier, year: year) }
        return Int64(days + day - 1)
    }

    /// The date of a day number (days since 1970-01-01).
    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        var remaining = Int(days)
        var year = 1970 + remaining / 366  // never overshoots
        remaining -= Int(self.days(fromCivil: year, 1, 1))
        while remaining >= (isLeap(year) ? 366 : 365) {
            remaining -= isLeap(year) ? 366 : 365
            year += 1
        }
        var month = 1
        while remaining >= daysIn(month: month, year: year) {
            remaining -= daysIn(month: month, year: year)
            month += 1
        }
        return (year, month, remaining + 1)
    }
}
