import Foundation

/// What a store held when it was read: compared at a conditional write, so that a write decided
/// on one reading does not land on another.
///
/// Two revisions are equal when the store held the same thing both times (the same bytes, or the
/// same generation of an in-memory value); nothing stored is a revision too (for a file store,
/// so is anything that is not a file it could read).
package struct StoredRevision: Equatable, Sendable {
    /// The bytes the store held (nil: nothing); for an in-memory store, its generation's bytes.
    package let bytes: Data?

    /// The revision of a store holding `bytes` (nil: nothing).
    package init(bytes: Data?) {
        self.bytes = bytes
    }

    /// The revision of an in-memory store after `generation` writes.
    package init(generation: UInt64) {
        bytes = withUnsafeBytes(of: generation) { Data($0) }
    }
}

/// A store that can replace or delete what it holds only if it still holds what was read, as one
/// step with respect to every other save and removal (in this process or, for a shared store, any
/// other).
///
/// What a refresh through the store relies on: it saves its result only over the session it
/// refreshed, and a logout or a login that happens between its check and its write must win.
/// The built-in stores conform; any other store is checked and written in two steps.
package protocol RevisionedAuthenticationStore: AuthenticationStore {
    /// What ``AuthenticationStore/read()`` returns, with the revision it was read at.
    func readRevision() throws -> (value: Value?, revision: StoredRevision)

    /// Saves `value` if the store still holds `revision`; returns false, and changes nothing,
    /// when it holds something else.
    func save(_ value: Value, ifStill revision: StoredRevision) throws -> Bool

    /// Deletes what is stored if the store still holds `revision`; returns false, and changes
    /// nothing, when it holds something else.
    func remove(ifStill revision: StoredRevision) throws -> Bool
}
