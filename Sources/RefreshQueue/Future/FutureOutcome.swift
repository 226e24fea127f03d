/// What a future holds: nothing yet, a value or an error.
///
/// One enum rather than an optional `Result`: a deinitializer, which is never specialized, looks
/// up the type metadata of what it destroys at run time, and an optional `Result` is two lookups.
@usableFromInline
enum FutureOutcome<Value: Sendable> {
    case pending
    case success(Value)
    case failure(any Error)

    /// The outcome of `result`.
    @inlinable
    init(_ result: Result<Value, any Error>) {
        switch result {
        case .success(let value): self = .success(value)
        case .failure(let error): self = .failure(error)
        }
    }

    /// The result; `nil` while pending.
    @inlinable
    var result: Result<Value, any Error>? {
        switch self {
        case .pending: return nil
        case .success(let value): return .success(value)
        case .failure(let error): return .failure(error)
        }
    }
}
