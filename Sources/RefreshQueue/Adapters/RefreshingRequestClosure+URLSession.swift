import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RefreshingRequestClosure {
    /// The most redirects ``data(for:using:)`` follows for one request.
    static var maximumRedirects: Int { 10 }

    /// Sends `request` through `session`, signed, following redirects itself; if the server
    /// answers 401, refreshes (once for all requests that carried the same token) and sends it
    /// once more.
    ///
    /// Plain `URLSession` code needs nothing else:
    ///
    /// ```swift
    /// let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
    /// ```
    ///
    /// Where the token goes:
    /// - Redirects are followed here, not by the session (whose Linux implementation copies every
    ///   header, the token included, to any `Location`). A redirect within the same origin is
    ///   signed again with the current token; one that changes scheme, host or port (https to
    ///   http included) goes out without any token, and so does every hop after it, also one that
    ///   comes back to the request's origin (A → B → A). 307 and 308 keep the method and body; 301
    ///   and 302 turn a `POST` into a `GET` without body, and 303 any method but `HEAD`, as
    ///   browsers do. At most 10 redirects (then `URLError(.httpTooManyRedirects)`).
    /// - The request is retried at most once after a 401, so a server that rejects every token
    ///   cannot cause a loop, and only for a 401 from the origin the token was sent to; the
    ///   retry is never retried, and its answer is returned whatever it is (a redirect is still
    ///   followed, as above). A `Data` body (`httpBody`) is sent again
    ///   unchanged. Requests that are not signed (the predicate exempts them, or their origin is
    ///   not allowed) are never retried, and neither is a request whose body is a stream
    ///   (`httpBodyStream`), which cannot be read twice: its 401, like a 307 or 308 that would have
    ///   to send that body again, is returned as it is.
    /// - On Linux, a 401 that carries an HTTP authentication challenge (`WWW-Authenticate: Basic`)
    ///   is returned without its body: URLSession there would otherwise wait forever for a password.
    ///
    /// Each transfer (each hop, and the retry) ends within the session's
    /// `timeoutIntervalForResource` with `URLError(.timedOut)`, also on Linux, whose URLSession does
    /// not enforce it itself.
    ///
    /// Cancelling the task cancels the waiting or the transfer and throws `CancellationError`.
    ///
    /// On iOS 14, tvOS 14, watchOS 7, macOS 11 and older, which have no task delegates, the session
    /// follows redirects itself, as its delegate allows, and Apple's URLSession then drops
    /// `Authorization`, even within the origin. A `GET` or `HEAD` answered 401 at the end of such
    /// a redirect within the request's origin is sent once more to where it landed, signed with
    /// the token held now, without a refresh; a 401 there is then handled as above. The hops the
    /// session followed cannot be seen: a chain that left the origin and came back to it is
    /// signed there too. Any other 401 where the session's redirects landed is returned as it is,
    /// without a refresh: the token did not reach the server.
    ///
    /// - Throws: A ``RefreshQueueError`` when the request could not be signed, the error a refresh
    ///   it waited for failed with (an ``OAuth2Error``, a store's error, or your `refresh()`'s),
    ///   `CancellationError`, or the session's error (a `URLError`).
    public func data(for request: URLRequest, using session: URLSession) async throws -> (Data, URLResponse) {
        try await data(for: request, using: session, sessionFollowsRedirects: !RedirectRefusal.isAvailable)
    }

    /// ``data(for:using:)``, where `sessionFollowsRedirects` tells whether the session, not this
    /// method, follows redirects (Apple systems without task delegates; tests on any system).
    func data(
        for request: URLRequest, using session: URLSession, sessionFollowsRedirects: Bool
    ) async throws -> (Data, URLResponse) {
        var outgoing = try await authorize(request)
        var redirects = 0
        var retried = false
        // Once a hop went out without the token, no later hop carries it: the origin it left
        // chose where the chain goes next, also back to the request's own origin.
        var leftOrigin = false
        // Where the last answer that the session reached by redirects came from.
        var landedAt: URL?
        while true {
            let (data, response) = try await session.transfer(
                outgoing, deadline: Self.resourceDeadline(of: session), refusingRedirects: !sessionFollowsRedirects)
            guard let http = response as? HTTPURLResponse else { return (data, response) }
            if sessionFollowsRedirects, !leftOrigin,
                let landing = landing(of: outgoing, answeredBy: http, for: request),
                landing.url != landedAt
            {
                // The session followed a redirect within the origin and dropped the token on the way.
                redirects += 1
                guard redirects <= Self.maximumRedirects else { throw URLError(.httpTooManyRedirects) }
                landedAt = landing.url
                outgoing = try await authorize(landing)
                continue
            }
            if let next = redirect(of: outgoing, answeredBy: http), Self.canResend(outgoing, to: next) {
                redirects += 1
                guard redirects <= Self.maximumRedirects else { throw URLError(.httpTooManyRedirects) }
                // Same origin as this hop and as the request (the token belongs to the request's own
                // origin, whatever origins the redirects pass; parsed only when a redirect comes):
                // signed again with the token held now; any other (A → B → B included): no token.
                let origin = Origin(next.url)
                let staysWithToken =
                    !leftOrigin && origin != nil && origin == Origin(outgoing.url) && origin == Origin(request.url)
                if !staysWithToken { leftOrigin = true }
                outgoing = staysWithToken ? try await authorize(next) : next
                continue
            }
            // A 401 where the session's own redirects landed came for a request without the token
            // (Apple's URLSession dropped it): no reason to blame the token, nor to refresh.
            let landedElsewhere = sessionFollowsRedirects && http.url != nil && http.url != outgoing.url
            guard http.statusCode == 401, !retried, !landedElsewhere, carriesToken(outgoing),
                outgoing.httpBodyStream == nil
            else {
                return (data, response)
            }
            retried = true
            outgoing = try await reauthorize(outgoing, response: http)
        }
    }

    /// Signs `newRequest`, the next hop of a redirect that `task` received in `response`, only if
    /// it stays within `response`'s origin and the origin of the task's original request, and the
    /// hop that was redirected (the task's `currentRequest`) carried the token; otherwise takes
    /// every token header off it.
    ///
    /// The form to call from a redirect method, and the one ``RedirectSigningDelegate`` uses: once
    /// a hop went out without the token, no later hop carries it, so a chain that leaves the
    /// token's origin takes the token neither to the new origin (A → B → B) nor back to the
    /// first one, to a URL the other origin chose (A → B → A).
    ///
    /// On Linux, call `completion` before the task's request timeout passes: URLSession there
    /// times the task out while it waits for the decision, and a decision that comes later stops
    /// the process. ``RedirectSigningDelegate`` gives up waiting for a refresh in time (the task
    /// then receives the redirect response itself).
    public func authorizeRedirect(
        _ newRequest: URLRequest, answering response: HTTPURLResponse, task: URLSessionTask,
        completion: @escaping @Sendable (URLRequest?) -> Void
    ) {
        authorizeRedirect(
            newRequest, answering: response, originalRequest: task.originalRequest,
            redirectedRequest: task.currentRequest, waitingAtMost: nil, completion: completion)
    }

    /// ``authorizeRedirect(_:answering:task:completion:)``, given the task's `originalRequest`
    /// and, when known, its `currentRequest` (the hop that was redirected); completes with `nil`
    /// when the redirect has not been signed `limit` seconds from now (it waits for a refresh).
    func authorizeRedirect(
        _ newRequest: URLRequest, answering response: HTTPURLResponse, originalRequest: URLRequest?,
        redirectedRequest: URLRequest? = nil, waitingAtMost limit: TimeInterval?,
        completion: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let completion = delivering(completion)
        let bare = withoutToken(newRequest)
        guard let origin = Origin(newRequest.url), origin == Origin(response.url),
            originalRequest.map({ Origin($0.url) == origin }) ?? true,
            redirectedRequest.map({ $0.value(forHTTPHeaderField: scheme.headerName) != nil }) ?? true
        else {
            completion(bare)
            return
        }
        let task = startAuthorizing(bare) { result in completion(try? result.get()) }
        if let limit, !task.isCompleted {
            // A cancelled wait completes with `nil`; a task that completed meanwhile ignores it.
            timerQueue.asyncAfter(deadline: .after(seconds: limit)) { task.cancel() }
        }
    }

    /// When a transfer through `session` must end: its resource timeout from now, on Linux, where
    /// URLSession does not enforce that timeout; elsewhere URLSession does.
    private static func resourceDeadline(of session: URLSession) -> DispatchTime? {
        #if canImport(FoundationNetworking)
        let limit = session.configuration.timeoutIntervalForResource
        return limit.isFinite && limit > 0 ? .after(seconds: limit) : nil
        #else
        return nil
        #endif
    }

    /// The request that answers a redirect, without any token; `nil` when `response` is not a
    /// redirect to follow.
    private func redirect(of request: URLRequest, answeredBy response: HTTPURLResponse) -> URLRequest? {
        guard [301, 302, 303, 307, 308].contains(response.statusCode),
            let location = response.value(forHTTPHeaderField: "Location"),
            let target = URL(string: location, relativeTo: response.url ?? request.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "https" || scheme == "http"
        else { return nil }
        var next = withoutToken(request)
        next.url = target
        let method = request.httpMethod ?? "GET"
        let becomesGet =
            response.statusCode == 303
            ? method != "HEAD" : ([301, 302].contains(response.statusCode) && method == "POST")
        if becomesGet {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for name in ["Content-Type", "Content-Length"] { next.setValue(nil, forHTTPHeaderField: name) }
        }
        return next
    }

    /// `request` without its token, sent to where the session's redirects took it, when `response`
    /// is a 401 from there that the token can be sent to: `request` carried it, the redirects
    /// stayed within the origin of `request` and of `original`, and repeating the request is safe
    /// (`GET` or `HEAD`: a redirect may have changed any other method). Otherwise `nil`.
    private func landing(
        of request: URLRequest, answeredBy response: HTTPURLResponse, for original: URLRequest
    ) -> URLRequest? {
        guard response.statusCode == 401, let landed = response.url, landed != request.url,
            ["GET", "HEAD"].contains(request.httpMethod ?? "GET"), carriesToken(request),
            let origin = Origin(landed), origin == Origin(request.url), origin == Origin(original.url)
        else { return nil }
        var next = withoutToken(request)
        next.url = landed
        return next
    }

    /// Whether `next` can go out after `request`: a body stream is gone once sent, so a redirect
    /// that keeps the body (307, 308) cannot be followed.
    private static func canResend(_ request: URLRequest, to next: URLRequest) -> Bool {
        request.httpBodyStream == nil || next.httpBodyStream == nil
    }

    /// `request` without the token's header, in any letter case.
    private func withoutToken(_ request: URLRequest) -> URLRequest {
        var bare = request
        for name in (request.allHTTPHeaderFields ?? [:]).keys
        where name.caseInsensitiveCompare(scheme.headerName) == .orderedSame {
            bare.setValue(nil, forHTTPHeaderField: name)
        }
        return bare
    }

    private func carriesToken(_ request: URLRequest) -> Bool {
        request.value(forHTTPHeaderField: scheme.headerName) != nil && answerWithoutSigning(request) == nil
    }
}
