/// An ``AuthenticationStore`` that keeps the value in memory only.
///
/// For tests, previews, and apps that deliberately forget the user when they quit. Nothing is
/// written anywhere; the value is gone when the store is released.
///
/// ```swift
/// let store = InMemoryAuthenticationStore(FakeAuthentication(accessToken: "test"))
/// let closure = RefreshingRequestClosure<FakeAuthentication>(find: { store.load() })
/// ```
public final class InMemoryAuthenticationStore<Value: Sendable>: AuthenticationStore {
    /// The value, and how many times it was written: the revision a conditional write compares.
    private let state: Locked<(value: Value?, generation: UInt64)>

    /// Creates a store holding `value`, or an empty one.
    public init(_ value: Value? = nil) {
        state = Locked((value, 0))
    }

    /// The value saved last, or nil when there is none.
    public func load() -> Value? {
        state.withLock { $0.value }
    }

    /// Replaces the stored value. Never throws; `throws` comes from the protocol.
    public func save(_ value: Value) throws {
        _ = write(value, if: nil)
    }

    /// Forgets the stored value. Never throws; `throws` comes from the protocol.
    public func remove() throws {
        _ = write(nil, if: nil)
    }

    /// Stores `value` (nil: removes) if the store is still at `revision` (nil: whatever it is at);
    /// returns whether it did.
    private func write(_ value: Value?, if revision: StoredRevision?) -> Bool {
        let replaced = state.withLock { state -> (done: Bool, old: Value?) in
            guard revision == nil || revision == StoredRevision(generation: state.generation) else {
                return (false, nil)
            }
            defer { state = (value, state.generation &+ 1) }
            return (true, state.value)
        }
        // Released here, outside the lock: the value's deinit may be user code.
        _ = replaced.old
        return replaced.done
    }
}

extension InMemoryAuthenticationStore: RevisionedAuthenticationStore {
    /// The value saved last, with the number of writes so far as its revision.
    package func readRevision() throws -> (value: Value?, revision: StoredRevision) {
        state.withLock { ($0.value, StoredRevision(generation: $0.generation)) }
    }

    /// Replaces the stored value if nothing was saved or removed since `revision`.
    package func save(_ value: Value, ifStill revision: StoredRevision) throws -> Bool {
        write(value, if: revision)
    }

    /// Forgets the stored value if nothing was saved or removed since `revision`.
    package func remove(ifStill revision: StoredRevision) throws -> Bool {
        write(nil, if: revision)
    }
}

extension InMemoryAuthenticationStore: CustomReflectable {
    /// Whether a value is stored; not the value, which holds a token.
    public var customMirror: Mirror {
        Mirror(self, children: ["holdsValue": state.withLock { $0.value != nil }], displayStyle: .class)
    }
}
