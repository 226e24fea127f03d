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
    private let state: Locked<Value?>

    /// Creates a store holding `value`, or an empty one.
    public init(_ value: Value? = nil) {
        state = Locked(value)
    }

    /// The value saved last, or nil when there is none.
    public func load() -> Value? {
        state.withLock { $0 }
    }

    /// Replaces the stored value. Never throws; `throws` comes from the protocol.
    public func save(_ value: Value) throws {
        let replaced = state.withLock { state in
            defer { state = value }
            return state
        }
        // Released here, outside the lock: the value's deinit may be user code.
        _ = replaced
    }

    /// Forgets the stored value. Never throws; `throws` comes from the protocol.
    public func remove() throws {
        let removed = state.withLock { state in
            defer { state = nil }
            return state
        }
        _ = removed
    }
}

extension InMemoryAuthenticationStore: CustomReflectable {
    /// Whether a value is stored; not the value, which holds a token.
    public var customMirror: Mirror {
        Mirror(self, children: ["holdsValue": state.withLock { $0 != nil }], displayStyle: .class)
    }
}
