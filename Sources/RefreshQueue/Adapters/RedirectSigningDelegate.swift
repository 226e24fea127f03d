import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLSession` delegate that keeps a ``RefreshingRequestClosure``'s token within its origin
/// across redirects, for apps that drive their own session instead of
/// ``RefreshingRequestClosure/data(for:using:)``.
///
/// A redirect to the same origin as the task's original request is signed again with the current
/// token; one to another scheme, host or port (https to http included) goes out without the
/// token, and so do the hops after it, also those within the new origin and those that come back
/// to the first (A → B → A). On Linux, URLSession would otherwise copy `Authorization` to any
/// `Location`.
///
/// ```swift
/// let session = URLSession(configuration: .default, delegate: RedirectSigningDelegate(authentication),
///                          delegateQueue: nil)
/// authentication.authorize(URLRequest(url: meURL)) { result in
///     guard case .success(let signed) = result else { return }
///     session.dataTask(with: signed) { data, response, error in … }.resume()
/// }
/// ```
///
/// With a delegate of your own, call
/// ``RefreshingRequestClosure/authorizeRedirect(_:answering:task:completion:)`` from its
/// redirect method instead, or set this one as a data task's `delegate` (Linux; iOS 15, macOS 12).
/// On Linux, the async data call that takes a task delegate never asks that delegate about
/// redirects: do not rely on it there. Also on Linux, URLSession times a task out while it waits
/// for the redirect decision and stops the process if the decision comes later; a redirect whose
/// signing waits for a refresh is therefore not followed (the task receives the redirect response
/// itself) when the wait nears the task's request timeout.
public final class RedirectSigningDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    private let decide:
        @Sendable (
            URLRequest, HTTPURLResponse, URLRequest?, URLRequest?, TimeInterval?,
            @escaping @Sendable (URLRequest?) -> Void
        ) -> Void

    /// A delegate that signs redirects with `closure`'s token.
    public init<Authentication>(_ closure: RefreshingRequestClosure<Authentication>) {
        decide = { request, response, original, redirected, limit, completion in
            closure.authorizeRedirect(
                request, answering: response, originalRequest: original, redirectedRequest: redirected,
                waitingAtMost: limit, completion: completion)
        }
    }

    /// Signs the redirected request again, or takes the token off it; see the type's description.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        decide(
            request, response, task.originalRequest, task.currentRequest, Self.decisionLimit(session, task),
            completionHandler)
    }

    /// How long the decision may wait for a refresh: on Linux, a little less than the request
    /// timeout (which there counts whole seconds from the start of the hop that redirected), so
    /// that the decision reaches URLSession while it still waits for one; elsewhere, unbounded.
    static func decisionLimit(_ session: URLSession, _ task: URLSessionTask) -> TimeInterval? {
        #if canImport(FoundationNetworking)
        var timeout = session.configuration.timeoutIntervalForRequest
        if let requested = task.currentRequest?.timeoutInterval, requested > 0 { timeout = min(timeout, requested) }
        guard timeout.isFinite else { return nil }
        let whole = max(timeout.rounded(.down), 0)
        return max(whole - 1, whole / 2)
        #else
        return nil
        #endif
    }
}
