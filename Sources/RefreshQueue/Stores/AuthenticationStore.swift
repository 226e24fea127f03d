import Foundation

/// Where an authentication is persisted between launches: a file, the keychain, memory.
///
/// A store is what `RefreshableAuthentication.find()` reads and what a successful `refresh()`
/// writes, so that a rotated refresh token survives the app being quit. Every method may be called
/// from any thread, also from several at once.
///
/// ```swift
/// let store = try FileAuthenticationStore<SpotifyAuthentication>(fileURL: url)
/// try store.save(authentication)   // after logging in or refreshing
/// let restored = store.load()      // in `find()`; nil means "log in again"
/// try store.remove()               // when logging out
/// ```
///
/// To accept any store, write a generic parameter (`<Store: AuthenticationStore>`) or a parameter
/// of type `some AuthenticationStore<Value>`. Avoid the constrained existential
/// `any AuthenticationStore<Value>`: most uses of it need the iOS 16 / macOS 13 runtime, newer than
/// this package's deployment targets (Linux builds do not check this).
public protocol AuthenticationStore<Value>: Sendable {
    /// What is stored: usually the app's `RefreshableAuthentication` type.
    associatedtype Value: Sendable

    /// The stored value, or nil when there is none or it cannot be read.
    ///
    /// Never throws and never crashes: a file that is corrupt, unreadable, or written by a newer
    /// version of the app reads as "no authentication", so the user is asked to log in again
    /// rather than being stuck. Stores that can tell why report it some other way (see
    /// ``FileAuthenticationStore``'s `onEvent`).
    func load() -> Value?

    /// The stored value, or nil when there is none; throws when there is one that cannot be read
    /// now.
    ///
    /// What a ``RefreshingRequestClosure`` built from the store calls: a file the device keeps
    /// locked (iOS data protection before the first unlock), or one whose permissions changed, is
    /// not a logout. The closure fails its requests with
    /// ``RefreshQueueError/authenticationUnreadable(_:)`` instead, and saves nothing after such a
    /// read. Stores that cannot tell the difference need not implement it: the default is
    /// ``load()``.
    func read() throws -> Value?

    /// Stores `value`, replacing what was stored.
    ///
    /// Call it after logging in and after every successful refresh. When it returns, the value is
    /// stored; when it throws, what was stored before is left as it was.
    func save(_ value: Value) throws

    /// Deletes the stored value; removing from an empty store succeeds.
    ///
    /// Call it when the user logs out.
    func remove() throws

    /// The lock a refresh takes so that other processes sharing the store do not refresh at the
    /// same time, or `nil` for a store that only this process uses.
    ///
    /// You do not implement this: a ``CoordinatedAuthenticationStore`` answers with its
    /// ``CoordinatedAuthenticationStore/lock(timeout:)``, every other store with `nil`.
    func refreshLock(timeout: TimeInterval) throws -> (any AuthenticationStoreLock)?
}

extension AuthenticationStore {
    /// ``load()``: a store that never fails to read, or cannot tell why.
    public func read() throws -> Value? { load() }

    /// The store's ``CoordinatedAuthenticationStore/lock(timeout:)`` when it is a coordinated
    /// store, else `nil`: a plain store is not shared with other processes.
    ///
    /// Asked when the program runs: a generic wrapper that is coordinated only when what it wraps
    /// is (`extension Wrapper: CoordinatedAuthenticationStore where Inner: …`) has this method as
    /// its own, whatever it wraps, and must still take the lock it forwards.
    public func refreshLock(timeout: TimeInterval) throws -> (any AuthenticationStoreLock)? {
        guard let coordinated = self as? any CoordinatedAuthenticationStore else { return nil }
        return try coordinated.lock(timeout: timeout)
    }
}
