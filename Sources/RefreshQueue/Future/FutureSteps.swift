/// The transform of a `map` stage, held by the stage's future until the stage runs (see
/// `Future.storeStep(_:)`).
///
/// A struct whose property is declared like `map`'s parameter, so that the closure keeps its calling
/// convention: stored as a bare generic value, a closure is converted to the most general one,
/// which takes a thunk, an allocation, when its type's own differs (as `flatMap`'s does, returning
/// a class directly).
@usableFromInline
struct FutureMapStep<Value: Sendable, T: Sendable> {
    @usableFromInline let transform: @Sendable (Value) throws -> T

    @inlinable
    init(_ transform: @escaping @Sendable (Value) throws -> T) {
        self.transform = transform
    }
}

/// The transform of a `flatMap` stage, held like ``FutureMapStep``.
@usableFromInline
struct FutureFlatMapStep<Value: Sendable, T: Sendable> {
    @usableFromInline let transform: @Sendable (Value) -> Future<T>

    @inlinable
    init(_ transform: @escaping @Sendable (Value) -> Future<T>) {
        self.transform = transform
    }
}
