/// Sixteen bytes inside a future that hold, depending on its ``FutureState``: nothing; the
/// transform of the stage that will complete it; its value; a box holding a value too large for
/// them; or its error.
///
/// Raw bytes rather than a `Result<Value, any Error>?` property: a deinitializer is never
/// specialized, so it looks up at run time the type metadata of every property it destroys whose
/// type is built from `Value`, and that one lookup cost more than the rest of a stage of a chain.
/// Destroying a `Value` itself, an error or a reference needs no lookup.
///
/// It is the first property of a future and is only ever used through its address (see
/// `Future.withStorage(_:)`), which is ``offset`` bytes into the object.
@usableFromInline
struct FutureStorage {
    @usableFromInline var words: (UInt64, UInt64)

    /// Empty.
    @inlinable
    init() {
        words = (0, 0)
    }

    /// Where the first property of a class instance lies: after the object's header, which is two
    /// pointers on every platform (the runtime asserts it), at the property's alignment.
    @inlinable
    static var offset: Int {
        let header = 2 * MemoryLayout<UnsafeRawPointer>.size
        let alignment = MemoryLayout<Self>.alignment
        return (header + alignment - 1) / alignment * alignment
    }

    /// Whether a `T` fits in the bytes.
    @inlinable
    static func holds<T>(_ type: T.Type) -> Bool {
        MemoryLayout<T>.size <= MemoryLayout<Self>.size && MemoryLayout<T>.alignment <= MemoryLayout<Self>.alignment
    }
}

/// What a future's ``FutureStorage`` holds.
@usableFromInline
enum FutureState: UInt8 {
    /// Nothing, or (see `Future.holdsStep`) the transform of the stage that will complete it.
    case pending
    /// The value, of a type that must be destroyed.
    case value
    /// The value, of a type with nothing to destroy (no references, as `Int`).
    case trivialValue
    /// A ``FutureValueBox`` holding the value.
    case boxedValue
    /// The error.
    case error

    /// Whether the future has completed.
    @inlinable
    var isSettled: Bool { self != .pending }
}

/// A value too large for a future's ``FutureStorage``.
@usableFromInline
final class FutureValueBox<Value: Sendable>: Sendable {
    @usableFromInline let value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}

/// How a stage's transform is destroyed by a deinitializer that does not know its type: every
/// Swift closure has the same layout (a function and a context reference), whatever its type.
@usableFromInline
typealias FutureErasedStep = @Sendable () -> Void
