import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A task delegate that refuses every redirect, so that the caller gets the 3xx answer and
/// decides itself where the request, and its token, may go next. One per task.
///
/// On Linux it also refuses HTTP authentication challenges (a 401 with `WWW-Authenticate: Basic`,
/// say): swift-corelibs-foundation otherwise suspends the task forever when no credential is
/// stored for the challenge, whatever the request timeout. That cancels the task, and
/// ``challengedResponse`` keeps the 401 so that the caller can return it.
///
/// One is made for every transfer, and its answer is written at most once, so it has no mutex of
/// its own (a mutex would cost an allocation per transfer): ``SharedLocks`` guard it.
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    /// Read and written only under `SharedLocks.withLock(for: self)`.
    private var challenged: URLResponse?

    /// The answer whose authentication challenge was refused (the task was cancelled for it), if any.
    var challengedResponse: URLResponse? {
        SharedLocks.withLock(for: self) { challenged }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    #if canImport(FoundationNetworking)
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard challenge.isHTTPAuthentication, let response = challenge.failureResponse ?? task.response
        else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        SharedLocks.withLock(for: self) { challenged = response }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }
    #endif

    /// Whether ``install(on:)`` works here: task delegates exist on Linux and from iOS 15, macOS 12,
    /// tvOS 15 and watchOS 8 on.
    static var isAvailable: Bool {
        if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) { return true }
        return false
    }

    /// Makes `task` refuse redirects whatever its session's delegate says, where the platform has
    /// task delegates (Linux; iOS 15, macOS 12 and later). On older Apple systems the session
    /// follows redirects, and Apple's URLSession drops `Authorization` when it does.
    func install(on task: URLSessionTask) {
        if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
            task.delegate = self
        }
    }
}
