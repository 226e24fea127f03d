import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A task delegate that refuses every redirect, so that the caller gets the 3xx answer and
/// decides itself where the request, and its token, may go next.
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    static let shared = RedirectRefusal()

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Makes `task` refuse redirects whatever its session's delegate says, where the platform has
    /// task delegates (Linux; iOS 15, macOS 12 and later). On older Apple systems the session
    /// follows redirects, and Apple's URLSession drops `Authorization` when it does.
    static func install(on task: URLSessionTask) {
        if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
            task.delegate = shared
        }
    }
}
