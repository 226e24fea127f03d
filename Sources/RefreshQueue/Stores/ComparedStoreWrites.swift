/// The reads and conditional writes of a refresh through a store, for any store: decided and
/// written as one step where the store is a ``RevisionedAuthenticationStore``, checked and then
/// written in two steps for any other (whose revisions are nil).
struct ComparedStoreWrites<Value: Sendable>: Sendable {
    /// What is stored, with the revision a conditional write compares.
    let read: @Sendable () throws -> (value: Value?, revision: StoredRevision?)
    /// Saves the value if the store still holds the revision; false when it holds something else.
    let save: @Sendable (Value, StoredRevision?) throws -> Bool
    /// Deletes what is stored if the store still holds the revision; false when it holds
    /// something else.
    let remove: @Sendable (StoredRevision?) throws -> Bool

    init<Store: AuthenticationStore>(_ store: Store) where Store.Value == Value {
        if let revisioned = store as? any RevisionedAuthenticationStore,
            let writes = Self.comparing(revisioned)
        {
            self = writes
            return
        }
        read = { (try store.read(), nil) }
        save = { value, _ in
            try store.save(value)
            return true
        }
        remove = { _ in
            try store.remove()
            return true
        }
    }

    private init(
        read: @escaping @Sendable () throws -> (value: Value?, revision: StoredRevision?),
        save: @escaping @Sendable (Value, StoredRevision?) throws -> Bool,
        remove: @escaping @Sendable (StoredRevision?) throws -> Bool
    ) {
        self.read = read
        self.save = save
        self.remove = remove
    }

    /// The writes of `store`, whose values are `Value`s (the caller's store, seen as a
    /// revisioned one); nil when they are not.
    private static func comparing<Store: RevisionedAuthenticationStore>(_ store: Store) -> Self? {
        guard Store.Value.self == Value.self else { return nil }
        return Self(
            read: {
                let (value, revision) = try store.readRevision()
                return (value.flatMap { $0 as? Value }, revision)
            },
            save: { value, revision in
                guard let value = value as? Store.Value else { return false }
                guard let revision else {
                    try store.save(value)
                    return true
                }
                return try store.save(value, ifStill: revision)
            },
            remove: { revision in
                guard let revision else {
                    try store.remove()
                    return true
                }
                return try store.remove(ifStill: revision)
            })
    }
}
