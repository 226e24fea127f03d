/// The transform of a stage, held by the stage's future until the stage runs: only
/// ``FutureMapStep`` and ``FutureFlatMapStep``.
///
/// `Future.init(step:)` takes nothing else. Were it open to any type, a closure would match it
/// wherever internal declarations are visible (in this module, and in tests that import it as
/// testable): `Future { complete in kept = complete }` would then make a pending future holding
/// that closure as a transform, never running it, instead of calling ``Future/init(_:)``.
@usableFromInline
protocol FutureStep {}

/// The transform of a `map` stage, held by the stage's future until the stage runs (see
/// `Future.storeStep(_:)`).
///
/// A struct whose property is declared like `map`'s parameter, so that the closure keeps its calling
/// convention: stored as a bare generic value, a closure is converted to the most general one,
/// which takes a thunk, an allocation, when its type's own differs (as `flatMap`'s does, returning
/// a class directly).
@usableFromInline
struct FutureMapStep<Value: Sendable, T: Sendable>: FutureStep {
    @usableFromInline let transform: @Sendable (Value) throws -> T

    @inlinable
    init(_ transform: consuming @escaping @Sendable (Value) throws -> T) {
        self.transform = transform
    }
}

/// The transform of a `flatMap` stage, held like ``FutureMapStep``.
@usableFromInline
struct FutureFlatMapStep<Value: Sendable, T: Sendable>: FutureStep {
    @usableFromInline let transform: @Sendable (Value) -> Future<T>

    @inlinable
    init(_ transform: consuming @escaping @Sendable (Value) -> Future<T>) {
        self.transform = transform
    }
}
