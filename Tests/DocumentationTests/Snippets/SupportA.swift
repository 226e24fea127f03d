// What the snippets of GettingStarted.md, Moya.md, URLSession.md and CallbackBasedCode.md assume
// exists in an app or in Moya, besides what Support.swift declares. None of it is part of
// RefreshQueue.

import Dispatch
import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - More of Moya's shapes

/// What Moya's `request(_:completion:)` returns: `Cancellable`, whose `cancel()` marks the request
/// cancelled.
final class MoyaCancellableStandIn {
    private(set) var isCancelled = false

    func cancel() {
        isCancelled = true
    }
}

extension MoyaProvider {
    /// Moya's provider also takes the queue its network answers are delivered on (`nil`: the
    /// main queue, Alamofire's default).
    convenience init(requestClosure: @escaping RequestClosure, callbackQueue: DispatchQueue?) {
        self.init(requestClosure: requestClosure)
    }

    /// Moya's `request(_:completion:)`. The stand-in only asks the request closure for the request
    /// and reports a failure of it, as Moya does, without any queue hop.
    @discardableResult
    func request(
        _ target: Target, completion: @escaping (Result<Response, MoyaError>) -> Void
    ) -> MoyaCancellableStandIn {
        let cancellable = MoyaCancellableStandIn()
        requestClosure(Endpoint(url: URL(string: "https://api.example.com/v1/me")!)) { result in
            if case .failure(let error) = result { completion(.failure(error)) }
        }
        return cancellable
    }
}
