/// Callbacks that became due when a future completed, waiting to be run.
///
/// Completing a future never calls its callbacks directly. It returns them as a
/// `FutureContinuations`, and whoever completed the future runs them with ``run()``. When a
/// callback completes the next future of a chain (as `map` and `flatMap` do), it returns *that*
/// future's callbacks instead of running them, and `run()` adds them to its own work list. A
/// chain of 100,000 stages is therefore completed by one loop, one stage after another, with
/// constant stack depth.
struct FutureContinuations: Sendable {
    typealias Step = @Sendable () -> FutureContinuations

    // One step is by far the most common case (a chain); it needs no array.
    private var single: Step?
    private var many: [Step]

    /// Nothing to run.
    init() {
        single = nil
        many = []
    }

    /// One step to run.
    init(_ step: @escaping Step) {
        single = step
        many = []
    }

    /// Several steps to run, in order.
    init(_ steps: [Step]) {
        single = nil
        many = steps
    }

    /// Whether there is nothing to run.
    var isEmpty: Bool { single == nil && many.isEmpty }

    /// Runs every step and every step they produce, depth first, in a loop.
    ///
    /// Depth first keeps the order a nested call would have had: the callbacks of a future that
    /// a step completes run before the next sibling step.
    func run() {
        if isEmpty { return }
        var pending: [Step] = []
        push(self, onto: &pending)
        while let step = pending.popLast() {
            let produced = step()
            push(produced, onto: &pending)
        }
    }

    /// Pushes the steps in reverse so that `popLast` takes them in order.
    private func push(_ continuations: FutureContinuations, onto stack: inout [Step]) {
        if let single = continuations.single {
            stack.append(single)
        }
        stack.append(contentsOf: continuations.many.reversed())
    }
}
