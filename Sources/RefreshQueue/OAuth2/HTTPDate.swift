import Foundation

/// Reads an HTTP-date (RFC 9110 §5.6.7), as a `Retry-After` may carry one, without a date
/// formatter: the three forms a recipient must accept, in GMT, checked field by field.
///
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
/// - obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year more than 50 years
///   ahead of `now` is read in the past century)
/// - obsolete asctime: `Sun Nov  6 08:49:37 1994`
///
/// The weekday is checked to be a weekday name, not to match the date.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// Seconds since 1970 of `text`, or `nil` when it is not an HTTP-date.
    static func secondsSince1970(_ text: String, now: Date = Date()) -> TimeInterval? {
        let fields = text.split(separator: " ")
        switch fields.count {
        case 6:  // IMF-fixdate
            guard let day = fields[0].dropLastIfComma(), shortDays.contains(String(day)), fields[5] == "GMT",
                fields[1].count == 2, fields[3].count == 4
            else { return nil }
            return seconds(day: fields[1], month: fields[2], year: number(fields[3]), time: fields[4])
        case 4:  // RFC 850
            let date = fields[1].split(separator: "-", omittingEmptySubsequences: false)
            guard let day = fields[0].dropLastIfComma(), longDays.contains(String(day)), fields[3] == "GMT",
                date.count == 3, date[0].count == 2, date[2].count == 2, let twoDigits = number(date[2])
            else { return nil }
            return seconds(day: date[0], month: date[1], year: fullYear(twoDigits, now: now), time: fields[2])
        case 5:  // asctime
            guard shortDays.contains(String(fields[0])), (1...2).contains(fields[2].count), fields[4].count == 4
            else { return nil }
            return seconds(day: fields[2], month: fields[1], year: number(fields[4]), time: fields[3])
        default:
            return nil
        }
    }

    private static func seconds(day: Substring, month: Substring, year: Int?, time: Substring) -> TimeInterval? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard let year, let day = number(day), let monthIndex = months.firstIndex(of: String(month)),
            clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = number(clock[0]), let minute = number(clock[1]), let second = number(clock[2]),
            hour < 24, minute < 60, second <= 60,  // 60: a leap second
            day >= 1, day <= daysIn(month: monthIndex + 1, year: year)
        else { return nil }
        // In 64 bits: a watch's `Int` has 32, which seconds since 1970 outgrow in 2038.
        let days = Int64(daysSince1970(year: year, month: monthIndex + 1, day: day))
        return TimeInterval(days * 86_400 + Int64(hour * 3_600 + minute * 60 + second))
    }

    /// ASCII digits only (at most four here), as a number.
    private static func number(_ digits: Substring) -> Int? {
        guard !digits.isEmpty, digits.count <= 4 else { return nil }
        var value = 0
        for byte in digits.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// RFC 9110: a two-digit year that would be more than 50 years in the future is in the past.
    private static func fullYear(_ twoDigits: Int, now: Date) -> Int {
        let thisYear = 1970 + Int(saturating: now.timeIntervalSince1970 / 31_556_952)
        var year = thisYear - thisYear % 100 + twoDigits
        if year > thisYear + 50 { year -= 100 }
        return year
    }

    private static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar (year 0...9999).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        // Count from 1 March of year 0, so that the leap day ends each counted year.
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension Substring {
    /// The text without its trailing comma, or `nil` when it does not end in one.
    fileprivate func dropLastIfComma() -> Substring? {
        last == "," ? dropLast() : nil
    }
}
