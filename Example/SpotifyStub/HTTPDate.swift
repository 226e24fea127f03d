#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// The IMF-fixdate for the `Date` response header (RFC 9110 §5.6.7), e.g.
/// `Sun, 06 Nov 1994 08:49:37 GMT`.
///
/// Formatted by hand from `gmtime_r` rather than with a `DateFormatter`: it runs for every
/// response on the event-loop thread and must not depend on locale settings.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The current time, formatted.
    static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil,
            (0..<7).contains(Int(parts.tm_wday)), (0..<12).contains(Int(parts.tm_mon))
        else {
            return "Thu, 01 Jan 1970 00:00:00 GMT"
        }
        return "\(days[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
    }

    private static func twoDigits(_ value: Int32) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
