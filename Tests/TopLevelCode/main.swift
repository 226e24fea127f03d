// Top-level code, as in a command-line tool's main.swift: compiled with the tests, never run.
// Here `try await` once picked a grant's `Future` form over its `async` one, so that `token`
// was a `Future<OAuth2Token>`; each name now has one form that `try await` can pick.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let client = TokenEndpointClient(
    tokenURL: URL(string: "https://accounts.example.test/api/token")!, clientID: "command-line-tool")
let login = AuthorizationCodeRequest(
    authorizationEndpoint: URL(string: "https://accounts.example.test/authorize")!, clientID: "command-line-tool",
    redirectURI: "http://127.0.0.1:8000/callback")
let code = try login.code(fromRedirect: URL(string: "http://127.0.0.1:8000/callback?code=c&state=\(login.state)")!)

let token = try await client.exchange(code: code, for: login)
let refreshed = try await client.refresh(token)
let tokens: [OAuth2Token] = [token, refreshed]
print(tokens.count)
