// The Swift snippets of SharingTokens.md, verbatim.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DocsB {
    static func sharedFile(
        sharedContainer: URL, client: TokenEndpointClient
    ) throws -> RefreshingRequestClosure<OAuth2Authentication> {
        let store = try FileAuthenticationStore<OAuth2Token>(
            fileURL: sharedContainer.appendingPathComponent("token.json"))
        let authentication = RefreshingRequestClosure(client: client, store: store)
        return authentication
    }
}

struct AuditedTokenStore: CoordinatedAuthenticationStore {
    let file: FileAuthenticationStore<OAuth2Token>

    func load() -> OAuth2Token? { file.load() }
    func read() throws -> OAuth2Token? { try file.read() }

    func save(_ value: OAuth2Token) throws {
        try file.save(value)
        log("token saved")
    }

    func remove() throws {
        try file.remove()
        log("token removed")
    }

    // Without this, refreshes through this store are not coordinated with other processes.
    func lock(timeout: TimeInterval) throws -> any AuthenticationStoreLock {
        try file.lock(timeout: timeout)
    }
}
