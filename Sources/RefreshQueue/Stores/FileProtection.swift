import Foundation

/// When iOS (and tvOS, watchOS) lets the app read the token file: its data-protection class.
///
/// A refresh may run in the background before the user has unlocked the device since it
/// started: with ``complete`` the file cannot be read then, and a read that fails is reported,
/// not taken for a logout. On other platforms the value is ignored.
public enum FileProtection: Sendable, Equatable {
    /// Readable only while the device is unlocked.
    case complete
    /// Readable while unlocked; a file open when the device locks stays readable.
    case completeUnlessOpen
    /// Readable from the first unlock after a restart on (the default): background refreshes work.
    case completeUntilFirstUserAuthentication
    /// Always readable.
    case none
}

#if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
extension FileProtection {
    /// Foundation's name for it.
    var fileProtectionType: FileProtectionType {
        switch self {
        case .complete: return .complete
        case .completeUnlessOpen: return .completeUnlessOpen
        case .completeUntilFirstUserAuthentication: return .completeUntilFirstUserAuthentication
        case .none: return .none
        }
    }
}
#endif
