import Dispatch

/// How long a refresh may take before the closure gives it up, handed to the refresh so that it
/// can bound its own parts (waiting for a lock, the token request) to end before that.
struct RefreshBudget: Sendable {
    /// When the refresh started (the monotonic clock of Dispatch).
    let startedAt: DispatchTime
    /// Seconds after `startedAt` at which the closure abandons it.
    let abandonAfter: Double

    init(abandonAfter: Double, startedAt: DispatchTime = .now()) {
        self.startedAt = startedAt
        self.abandonAfter = abandonAfter
    }

    /// A moment `fraction` of the way to abandonment.
    func deadline(atFraction fraction: Double) -> DispatchTime {
        startedAt.advanced(bySeconds: abandonAfter * fraction)
    }

    /// When the work of the refresh itself (the token request) must have ended: a tenth of the
    /// budget before abandonment, so that its result always arrives in time.
    var workDeadline: DispatchTime { deadline(atFraction: 0.9) }
}

/// An authentication whose refresh can bound itself by a ``RefreshBudget``, as the built-in
/// OAuth 2.0 authentication does with its token request.
protocol BudgetedRefresh: Sendable {
    /// The refresh, ending before the budget runs out: a `Future<Self>`.
    func refresh(within budget: RefreshBudget) -> any Sendable
}

/// A refresh whose result the store refused to save (the user logged out, or logged in as
/// someone else, meanwhile): the closure forgets what it refreshed and loads afresh.
struct RefreshSuperseded: Error, Sendable, CustomStringConvertible {
    var description: String { "The refreshed authentication was not saved: the store changed meanwhile." }
}
