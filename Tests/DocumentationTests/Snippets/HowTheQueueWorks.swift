// The Swift snippets of HowTheQueueWorks.md, verbatim.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct ExpiringAuthentication: RefreshableAuthentication {
    let accessToken: String
    let expiresAt: Date

    // Requests are still signed with the token; one refresh runs in the background.
    var isRefreshRecommended: Bool { expiresAt.timeIntervalSinceNow < 300 }
    // Requests wait for a refresh.
    var isRefreshNeeded: Bool { expiresAt.timeIntervalSinceNow < 10 }
}

extension ExpiringAuthentication {
    func refresh() -> Future<ExpiringAuthentication> {
        Future(error: URLError(.notConnectedToInternet))
    }

    static func find() -> ExpiringAuthentication? { nil }
}

enum HowTheQueueWorksSnippets {
    static func burst(_ requests: [URLRequest]) async {
        let authentication = RefreshingRequestClosure<MyAuthentication>()

        await withTaskGroup(of: Void.self) { group in
            for request in requests {
                group.addTask {
                    _ = try? await authentication.authorize(request)
                }
            }
        }
    }
}
