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
/// token, and so do the hops after it, also those within the new origin. On Linux, URLSession would
/// otherwise copy `Authorization` to any `Location`.
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
/// ``RefreshingRequestClosure/authorizeRedirect(_:answering:originalRequest:completion:)`` from its
/// redirect method instead, or set this one as a data task's `delegate` (Linux; iOS 15, macOS 12).
/// On Linux, the async data call that takes a task delegate never asks that delegate about
/// redirects: do not rely on it there.
public final class RedirectSigningDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    private let decide:
        @Sendable (URLRequest, HTTPURLResponse, URLRequest?, @escaping @Sendable (URLRequest?) -> Void) -> Void

    /// A delegate that signs redirects with `closure`'s token.
    public init<Authentication>(_ closure: RefreshingRequestClosure<Authentication>) {
        decide = { request, response, original, completion in
            closure.authorizeRedirect(request, answering: response, originalRequest: original, completion: completion)
        }
    }

    /// Signs the redirected request again, or takes the token off it; see the type's description.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        decide(request, response, task.originalRequest, completionHandler)
    }
}
