import RefreshQueue

/// The transforms that both arms of a row apply, as closure values the optimizer cannot see
/// through: each adds a step that it only learns at run time (one).
///
/// Each is held in a generic property shaped like the parameter of `map` or `flatMap`, as a closure
/// written at the call site reaches it. A closure value of a concrete function type (`(Int) -> Int`)
/// would instead be wrapped in a reabstraction thunk, one allocation, every time it is passed to a
/// generic parameter: a cost of how the caller holds its closure, not of futures. Both arms call
/// the transform through the same property, so neither pays for a thunk nor is spared a call.
struct ScenarioFutureTransforms: Sendable {
    /// A `map` stage's transform, and what a baseline closure calls.
    let increment: Mapping<Int, Int>
    /// A `flatMap` stage's transform: an already completed future, as a cache hit would return.
    let cachedFuture: FlatMapping<Int, Int>
    /// What a baseline closure of a `flatMap` row calls instead: a function returning a `Result`.
    let cachedResult: ResultMapping<Int, Int>

    init() {
        let step = opaque(1)
        increment = Mapping { $0 &+ step }
        cachedFuture = FlatMapping { Future(value: $0 &+ step) }
        cachedResult = ResultMapping { .success($0 &+ step) }
    }

    /// A transform shaped like the parameter of `map`.
    struct Mapping<Input: Sendable, Output: Sendable>: Sendable {
        let function: @Sendable (Input) throws -> Output
    }

    /// A transform shaped like the parameter of `flatMap`.
    struct FlatMapping<Input: Sendable, Output: Sendable>: Sendable {
        let function: @Sendable (Input) -> Future<Output>
    }

    /// A transform returning a `Result`, in the same generic shape.
    struct ResultMapping<Input: Sendable, Output: Sendable>: Sendable {
        let function: @Sendable (Input) -> Result<Output, any Error>
    }
}
