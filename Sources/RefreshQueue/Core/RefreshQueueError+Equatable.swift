import Foundation

extension RefreshQueueError: Equatable {
    /// Whether both are the same case with equal values, so that a test can write
    /// `#expect(throws: RefreshQueueError.notAuthenticated) { … }`.
    ///
    /// The errors that ``refreshFailed(_:)`` and ``authenticationUnreadable(_:)`` carry are equal
    /// when they have the same type and are equal by `==` (for an `Equatable` error, such as a
    /// `URLError`), or otherwise bridge to the same `NSError` domain and code.
    public static func == (lhs: RefreshQueueError, rhs: RefreshQueueError) -> Bool {
        switch (lhs, rhs) {
        case (.notAuthenticated, .notAuthenticated), (.refreshTimedOut, .refreshTimedOut),
            (.invalidToken, .invalidToken), (.excessiveRefresh, .excessiveRefresh), (.cancelled, .cancelled):
            return true
        case (.refreshFailed(let left), .refreshFailed(let right)),
            (.authenticationUnreadable(let left), .authenticationUnreadable(let right)):
            return sameError(left, right)
        case (.invalidConfiguration(let left), .invalidConfiguration(let right)):
            return left == right
        case (.insecureRequest(let left), .insecureRequest(let right)):
            return left == right
        case (.notAuthenticated, _), (.refreshTimedOut, _), (.invalidToken, _), (.refreshFailed, _),
            (.excessiveRefresh, _), (.cancelled, _), (.invalidConfiguration, _), (.authenticationUnreadable, _),
            (.insecureRequest, _):
            return false
        }
    }

    /// Whether two carried errors are the same error, as ``==(_:_:)`` describes.
    private static func sameError(_ left: any Error, _ right: any Error) -> Bool {
        guard ObjectIdentifier(type(of: left)) == ObjectIdentifier(type(of: right)) else { return false }
        if let equatable = (left as Any) as? any Equatable {
            return equatable.isEqual(to: right)
        }
        let (leftBridged, rightBridged) = (left as NSError, right as NSError)
        return leftBridged.domain == rightBridged.domain && leftBridged.code == rightBridged.code
    }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool {
        (other as? Self) == self
    }
}
