/// Whether the sink keeps what it is given: only with an absurd number of arguments, which no run
/// has. The optimizer cannot know that, so it must compute every value handed to ``blackHole(_:)``.
private let sinkIsArmed = CommandLine.arguments.count > 1_000_000

/// Where an armed sink keeps values; never written in a real run.
nonisolated(unsafe) private var sunkValues: [Any] = []

/// Consumes `value` so that the optimizer cannot delete the work that produced it.
///
/// Costs one call and one predictable branch; the value is released by the caller as usual.
@inline(never)
func blackHole<T>(_ value: T) {
    if sinkIsArmed {
        sunkValues.append(value)
    }
}

/// Returns `value` in a way the optimizer cannot see through, so that a constant (a global
/// closure, say) is not folded into the code that uses it.
@inline(never)
func opaque<T>(_ value: T) -> T {
    if sinkIsArmed, let replacement = sunkValues.last as? T {
        return replacement
    }
    return value
}
