// What the snippets of OAuth2AndStores.md, SharingTokens.md, WhenTheServerSays401.md and
// Errors.md assume exists in an app, beside what Support.swift declares. None of it is part of
// RefreshQueue.
//
// The app's helpers are static members of `DocsB`, and the snippets are compiled inside
// `extension DocsB`, so that a helper's name (`open`, `showLogin`, …) never clashes with a global
// of another Snippets file or of the C library.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The namespace of these articles' snippets and of the app helpers they call.
enum DocsB {
    // MARK: - The app's user interface

    /// Shows the login screen.
    static func showLogin() {}

    /// Opens `url` in the browser (or an authentication session).
    static func openInBrowser(_ url: URL) {}

    /// Tells the user that the network is away.
    static func showOffline() {}

    /// Tells the user that the server asked for a pause.
    static func showBusy(retryAfter: TimeInterval?) {}

    /// Tries again once the device has been unlocked.
    static func retryWhenUnlocked() {}

    /// Starts the login flow from the beginning.
    static func startLoginAgain() {}

    /// Reports a token endpoint's refusal.
    static func report(_ code: String, _ description: String?) {}

    /// Hands a retried request's answer on.
    static func finish(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?) {}
}

// MARK: - A keychain item

/// Why a ``KeychainItem`` could not be read or written.
enum KeychainItemError: Error, Sendable {
    /// `errSecInteractionNotAllowed`: the device keeps the item locked.
    case interactionNotAllowed
    /// Any other `OSStatus`.
    case status(Int32)
}

/// An app's thin wrapper around one generic-password item of the keychain
/// (`SecItemCopyMatching`, `SecItemAdd`, `SecItemUpdate`, `SecItemDelete`). A stand-in here: the
/// snippets are compiled on Linux too, which has no keychain.
struct KeychainItem: Sendable {
    let service: String
    let account: String

    /// The item's data, or nil when there is none; throws when it exists but cannot be read now.
    func read() throws -> Data? { nil }

    /// Adds or replaces the item's data.
    func write(_ data: Data) throws {}

    /// Deletes the item; deleting a missing item succeeds.
    func delete() throws {}
}
