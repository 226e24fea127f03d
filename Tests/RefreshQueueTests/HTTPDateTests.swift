import Foundation
import Testing

@testable import RefreshQueue

/// `Retry-After` dates (RFC 9110 §5.6.7), read without a date formatter.
@Suite("HTTP-date", .timeLimit(.minutes(1)))
struct HTTPDateTests {
    /// 1994-11-06 08:49:37 GMT, the RFC's example.
    static let example: TimeInterval = 784_111_777

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func theThreeFormsARecipientMustAcceptReadAsTheSameMoment(_ text: String) {
        #expect(HTTPDate.secondsSince1970(text, now: Date(timeIntervalSince1970: 1_800_000_000)) == Self.example)
    }

    @Test(arguments: [
        "", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 30 Feb 1994 08:49:37 GMT", "Sun, 29 Feb 1900 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Now 1994 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, +6 Nov 1994 08:49:37 GMT", "Sun, ٠٦ Nov 1994 08:49:37 GMT", "120", "tomorrow",
    ])
    func anythingElseIsNotADate(_ text: String) {
        #expect(HTTPDate.secondsSince1970(text) == nil)
    }

    @Test func leapDaysAndTheEdgesOfTheCalendarAreRight() {
        #expect(HTTPDate.secondsSince1970("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(HTTPDate.secondsSince1970("Tue, 29 Feb 2000 00:00:00 GMT") == 951_782_400)
        #expect(HTTPDate.secondsSince1970("Fri, 31 Dec 9999 23:59:59 GMT") == 253_402_300_799)
        #expect(HTTPDate.secondsSince1970("Sat, 01 Jan 0000 00:00:00 GMT") == -62_167_219_200)
        #expect(HTTPDate.secondsSince1970("Wed, 31 Dec 1969 23:59:59 GMT") == -1)
    }

    @Test func aTwoDigitYearMoreThanFiftyYearsAheadIsInThePastCentury() {
        let in2026 = Date(timeIntervalSince1970: 1_790_000_000)
        #expect(HTTPDate.secondsSince1970("Wednesday, 01-Jan-76 00:00:00 GMT", now: in2026) == 3_345_062_400)  // 2076
        #expect(HTTPDate.secondsSince1970("Saturday, 01-Jan-77 00:00:00 GMT", now: in2026) == 220_924_800)  // 1977
    }

    @Test func everyDayOfFourHundredYearsAgreesWithFoundation() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        // Every 7th day from 1800 to 2200, at a time of day that moves too.
        var moment: TimeInterval = -5_364_662_400
        while moment < 7_258_118_400 {
            let text = formatter.string(from: Date(timeIntervalSince1970: moment))
            #expect(HTTPDate.secondsSince1970(text) == moment, "\(text)")
            moment += 7 * 86_400 + 3_661
        }
    }

    @Test func retryAfterAsADateIsTheDelayFromNowClampedToADay() {
        let now = Date(timeIntervalSince1970: Self.example - 90)
        #expect(TokenEndpointClient.seconds(fromRetryAfter: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 90)
        #expect(TokenEndpointClient.seconds(fromRetryAfter: " Sun, 06 Nov 1994 08:49:37 GMT ", now: now) == 90)
        let later = Date(timeIntervalSince1970: Self.example + 90)
        #expect(TokenEndpointClient.seconds(fromRetryAfter: "Sun, 06 Nov 1994 08:49:37 GMT", now: later) == 0)
        #expect(TokenEndpointClient.seconds(fromRetryAfter: "Fri, 31 Dec 9999 23:59:59 GMT", now: now) == 86_400)
    }
}
