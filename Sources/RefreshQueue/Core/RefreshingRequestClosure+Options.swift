import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RefreshingRequestClosure {
    /// Every option of a ``RefreshingRequestClosure``, each with its default.
    ///
    /// Every initializer takes one, so a closure is configured the same way whether it calls
    /// `Authentication.find()` itself, reads a store, or refreshes OAuth 2.0 tokens:
    ///
    /// ```swift
    /// var options = RefreshingRequestClosure<SpotifyAuthentication>.Options(refreshTimeout: 10)
    /// options.origins = .only(apiURL)
    /// options.onEvent = { event in logger.info("\(event.description)") }
    /// let authentication = RefreshingRequestClosure<SpotifyAuthentication>(options: options)
    /// ```
    ///
    /// | Option | Default |
    /// |---|---|
    /// | ``refreshTimeout`` | 30 s |
    /// | ``abandonAfter`` | 4 × `refreshTimeout`, and at least 120 s |
    /// | ``refreshWindow`` | 5 refreshes in 30 s |
    /// | ``scheme`` | `Authorization: Bearer <token>` |
    /// | ``missingAuthentication`` | fail with ``RefreshQueueError/notAuthenticated`` |
    /// | ``origins`` | every origin (plain `http://` only to this machine) |
    /// | ``requiresAuthentication`` | every request is signed |
    /// | ``completionQueue`` | none: completions run where the work ended |
    /// | ``onEvent`` | none |
    /// | ``clock`` | `ProcessInfo.processInfo.systemUptime` |
    public struct Options: Sendable {
        /// Seconds a request may wait, for a refresh or for the authentication to load, before it
        /// fails with ``RefreshQueueError/refreshTimedOut``. Must be finite and above zero (see
        /// <doc:Errors#Invalid-configuration>).
        public var refreshTimeout: TimeInterval {
            didSet { requirePositiveSeconds(refreshTimeout, "Options.refreshTimeout") }
        }

        /// Seconds after which a refresh that has not ended is given up, so that a new one may
        /// start; `nil` means 4 × ``refreshTimeout`` and at least 120 s (a short timeout for
        /// requests does not make a slow refresh end sooner: until it is given up, no second refresh
        /// of its token starts). A value below ``refreshTimeout`` means ``refreshTimeout``; a given
        /// value must be finite and above zero. A store-backed closure holds its cross-process lock
        /// for at most as long.
        public var abandonAfter: TimeInterval? {
            didSet { Self.check(abandonAfter: abandonAfter) }
        }

        /// How many refreshes that look like a loop are allowed in how long (default 5 in 30 s);
        /// see ``RefreshWindow`` for what counts.
        public var refreshWindow: RefreshWindow

        /// Which header carries the token and how it is written (default
        /// `Authorization: Bearer <token>`).
        public var scheme: AuthorizationScheme

        /// What happens to a request when no authentication is found (default: it fails with
        /// ``RefreshQueueError/notAuthenticated``).
        public var missingAuthentication: MissingAuthenticationPolicy

        /// Which origins receive the token (default ``AllowedOrigins/all``). Requests to other
        /// origins pass unsigned; plain `http://` to another machine is refused, unless
        /// ``AllowedOrigins/allowingPlainHTTP()`` allows it.
        public var origins: AllowedOrigins

        /// Decides per request whether it is signed at all. Requests for which it returns
        /// `false` (the token request itself, public endpoints) skip the queue and pass
        /// unchanged, so that a refresh sent through the same provider cannot wait for itself.
        /// Default: every request is signed.
        public var requiresAuthentication: @Sendable (URLRequest) -> Bool

        /// The queue every completion handler of the callback API runs on: those of
        /// ``RefreshingRequestClosure/authorize(_:completion:)``,
        /// ``RefreshingRequestClosure/reauthorize(_:response:completion:)``,
        /// ``RefreshingRequestClosure/refreshIfNeeded(completion:)``,
        /// ``RefreshingRequestClosure/authorizeRedirect(_:answering:task:completion:)`` and the
        /// request closure's `done`, also when a request is signed at once.
        ///
        /// Default `nil`: a request signed without waiting completes on the caller's thread
        /// before the call returns, and one that waited completes on a thread of the closure's
        /// (its queue, its timer queue, or the thread where the refresh ended), or on the thread
        /// delivering other completions at that moment, one at a time and in arrival order,
        /// unless it is cancelled with ``AuthorizationTask/cancel()``, which completes it at once
        /// on the thread that cancels. Set it (to `.main`, or Moya's `callbackQueue`) when the
        /// code that receives failures expects one queue. A serial queue keeps the order in which
        /// waiting requests complete. `async` methods do not use it.
        public var completionQueue: DispatchQueue?

        /// Receives ``RefreshEvent``s for logging and metrics; never while a lock is held.
        public var onEvent: (@Sendable (RefreshEvent) -> Void)?

        /// Monotonic seconds, for waits, the refresh window and durations. Inject one in tests.
        ///
        /// A wait's timer is armed for what this clock says is left of the wait, counted in real
        /// seconds; when it fires it asks the clock again, and a request times out only once the
        /// clock says its time is up (else the timer is armed again). Moving the clock ahead does
        /// not end a wait before its timer fires; a clock that stands still keeps every wait
        /// going, so a test that freezes time sees no timeout.
        public var clock: @Sendable () -> TimeInterval

        /// Options with the given values; every parameter has the default the table above gives.
        ///
        /// A ``refreshTimeout`` or ``abandonAfter`` that is not finite and above zero stops the
        /// program, here or when the property is set later (see <doc:Errors#Invalid-configuration>).
        public init(
            refreshTimeout: TimeInterval = 30,
            abandonAfter: TimeInterval? = nil,
            refreshWindow: RefreshWindow = .default,
            scheme: AuthorizationScheme = .bearer,
            missingAuthentication: MissingAuthenticationPolicy = .fail,
            origins: AllowedOrigins = .all,
            requiresAuthentication: @escaping @Sendable (URLRequest) -> Bool = { _ in true },
            completionQueue: DispatchQueue? = nil,
            onEvent: (@Sendable (RefreshEvent) -> Void)? = nil,
            clock: @escaping @Sendable () -> TimeInterval = { ProcessInfo.processInfo.systemUptime }
        ) {
            requirePositiveSeconds(refreshTimeout, "Options.refreshTimeout")
            Self.check(abandonAfter: abandonAfter)
            self.refreshTimeout = refreshTimeout
            self.abandonAfter = abandonAfter
            self.refreshWindow = refreshWindow
            self.scheme = scheme
            self.missingAuthentication = missingAuthentication
            self.origins = origins
            self.requiresAuthentication = requiresAuthentication
            self.completionQueue = completionQueue
            self.onEvent = onEvent
            self.clock = clock
        }

        /// The least ``abandonAfter`` that `nil` stands for: a refresh gets two minutes to end,
        /// however short the wait of each request.
        static var minimumDefaultAbandonAfter: TimeInterval { 120 }

        private static func check(abandonAfter: TimeInterval?) {
            if let abandonAfter { requirePositiveSeconds(abandonAfter, "Options.abandonAfter") }
        }

        /// These options with ``abandonAfter`` replaced by the limit a closure uses, and that limit.
        var resolved: (options: Options, abandonAfter: TimeInterval) {
            var options = self
            let limit: TimeInterval
            if let given = abandonAfter {
                limit = max(given, refreshTimeout)
            } else {
                limit = max(4 * refreshTimeout, Self.minimumDefaultAbandonAfter)
            }
            options.abandonAfter = limit
            return (options, limit)
        }
    }
}
