import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A value no setting could make sense of stops the program where it is given, with a message
/// naming the option; the limit itself is accepted. Each stop runs in a process of its own.
@Suite("Invalid configuration", .timeLimit(.minutes(2)))
struct InvalidConfigurationTests {
    /// What the stopped process wrote, which must name `option` and show no secret.
    private static func check(
        _ result: ExitTest.Result?, names option: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let result else { return }
        let text = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(text.contains("RefreshQueue: \(option) must be"), "\(text)", sourceLocation: sourceLocation)
    }

    // MARK: Options

    @Test func aRefreshTimeoutOfZeroStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RefreshingRequestClosure<FakeAuthentication>(refreshTimeout: 0)
        }
        Self.check(result, names: "Options.refreshTimeout")
    }

    @Test func aNegativeRefreshTimeoutStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            _ = RefreshingRequestClosure<FakeAuthentication>.Options(refreshTimeout: -5)
        }
    }

    @Test func aRefreshTimeoutOfNaNStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            _ = RefreshingRequestClosure<FakeAuthentication>.Options(refreshTimeout: .nan)
        }
    }

    @Test func anEndlessRefreshTimeoutStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            _ = RefreshingRequestClosure<FakeAuthentication>.Options(refreshTimeout: .infinity)
        }
    }

    @Test func aRefreshTimeoutSetLaterIsCheckedToo() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var options = RefreshingRequestClosure<FakeAuthentication>.Options()
            options.refreshTimeout = -1
        }
        Self.check(result, names: "Options.refreshTimeout")
    }

    @Test func anAbandonLimitOfZeroStopsTheProgramWhenGivenOrSetLater() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RefreshingRequestClosure<FakeAuthentication>.Options(abandonAfter: 0)
        }
        Self.check(result, names: "Options.abandonAfter")
        await #expect(processExitsWith: .failure) {
            var options = RefreshingRequestClosure<FakeAuthentication>.Options()
            options.abandonAfter = -.infinity
        }
    }

    @Test func theSmallestPositiveTimeoutsAreAccepted() {
        var options = RefreshingRequestClosure<FakeAuthentication>.Options(
            refreshTimeout: .leastNonzeroMagnitude, abandonAfter: .leastNonzeroMagnitude)
        options.abandonAfter = nil
        let closure = RefreshingRequestClosure<FakeAuthentication>(options: options)
        #expect(closure.options.refreshTimeout == .leastNonzeroMagnitude)
        #expect(closure.options.abandonAfter == 120)
    }

    // MARK: RefreshWindow

    @Test func aWindowOfNoRefreshStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RefreshWindow(maximumRefreshes: 0, interval: 30)
        }
        Self.check(result, names: "RefreshWindow.maximumRefreshes")
    }

    @Test func aWindowOfNegativeLengthStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RefreshWindow(maximumRefreshes: 1, interval: -0.001)
        }
        Self.check(result, names: "RefreshWindow.interval")
    }

    @Test func aWindowOfEndlessLengthStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            _ = RefreshWindow(maximumRefreshes: 1, interval: .infinity)
        }
    }

    @Test func oneRefreshInNoTimeIsAWindow() {
        let window = RefreshWindow(maximumRefreshes: 1, interval: 0)
        #expect(window.maximumRefreshes == 1 && window.interval == 0)
    }

    // MARK: TokenLeeway

    @Test func aFractionAboveOneStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TokenLeeway(minimum: 60, fractionOfLifetime: 1.0001, maximumFractionOfLifetime: 1)
        }
        Self.check(result, names: "TokenLeeway.fractionOfLifetime")
    }

    @Test func aNegativeFractionSetLaterStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var leeway = TokenLeeway.default
            leeway.maximumFractionOfLifetime = -0.0001
        }
        Self.check(result, names: "TokenLeeway.maximumFractionOfLifetime")
    }

    @Test func aNegativeMinimumOrSafetyMarginStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TokenLeeway(minimum: -1, fractionOfLifetime: 0, maximumFractionOfLifetime: 1)
        }
        Self.check(result, names: "TokenLeeway.minimum")
        let margin = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var leeway = TokenLeeway.default
            leeway.safetyMargin = .nan
        }
        Self.check(margin, names: "TokenLeeway.safetyMargin")
    }

    @Test func fractionsOfZeroAndOneAndDurationsOfZeroAreAccepted() {
        let leeway = TokenLeeway(minimum: 0, fractionOfLifetime: 0, maximumFractionOfLifetime: 1, safetyMargin: 0)
        #expect(leeway.minimum == 0 && leeway.fractionOfLifetime == 0)
        #expect(leeway.maximumFractionOfLifetime == 1 && leeway.safetyMargin == 0)
    }

    // MARK: TokenEndpointClient

    @Test func aRequestTimeoutOfZeroStopsTheProgramWhenGivenOrSetLater() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TokenEndpointClient(
                tokenURL: URL(string: "https://a.test/token")!, clientID: "id", requestTimeout: 0)
        }
        Self.check(result, names: "TokenEndpointClient.requestTimeout")
        await #expect(processExitsWith: .failure) {
            var client = TokenEndpointClient(tokenURL: URL(string: "https://a.test/token")!, clientID: "id")
            client.requestTimeout = .infinity
        }
    }

    @Test func anEmptyClientIDStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TokenEndpointClient(tokenURL: URL(string: "https://a.test/token")!, clientID: "")
        }
        Self.check(result, names: "TokenEndpointClient.clientID")
        await #expect(processExitsWith: .failure) {
            var client = TokenEndpointClient(tokenURL: URL(string: "https://a.test/token")!, clientID: "id")
            client.clientID = " \n"
        }
    }

    @Test func aOneCharacterClientIDAndATinyTimeoutAreAccepted() {
        var client = TokenEndpointClient(
            tokenURL: URL(string: "https://a.test/token")!, clientID: "i", requestTimeout: 0.001)
        client.requestTimeout = 12
        #expect(client.clientID == "i" && client.requestTimeout == 12)
    }

    // MARK: AuthorizationCodeRequest

    @Test func anAuthorizationRequestWithoutAClientStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AuthorizationCodeRequest(
                authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "",
                redirectURI: "app://callback")
        }
        Self.check(result, names: "AuthorizationCodeRequest.clientID")
    }

    @Test func aRedirectURIWithoutASchemeStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AuthorizationCodeRequest(
                authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "id",
                redirectURI: "callback")
        }
        Self.check(result, names: "AuthorizationCodeRequest.redirectURI")
        await #expect(processExitsWith: .failure) {
            _ = AuthorizationCodeRequest(
                authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "id", redirectURI: "")
        }
    }

    @Test func anEmptyScopeStopsTheProgramInEitherInitializer() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AuthorizationCodeRequest(
                authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "id",
                redirectURI: "app://callback", scope: "")
        }
        Self.check(result, names: "AuthorizationCodeRequest.scope")
        await #expect(processExitsWith: .failure) {
            _ = try AuthorizationCodeRequest(
                authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "id",
                redirectURI: "app://callback", scope: " ", state: "state",
                codeVerifier: String(repeating: "v", count: 43))
        }
    }

    @Test func noScopeAndAOneLetterSchemeAreAccepted() throws {
        let endpoint = URL(string: "https://a.test/authorize")!
        let request = AuthorizationCodeRequest(authorizationEndpoint: endpoint, clientID: "id", redirectURI: "a:b")
        #expect(request.scope == nil && request.redirectURI == "a:b")
        let restored = try AuthorizationCodeRequest(
            authorizationEndpoint: endpoint, clientID: "id", redirectURI: "http://127.0.0.1/callback",
            scope: "user-read-private", state: "s", codeVerifier: String(repeating: "v", count: 43))
        #expect(restored.scope == "user-read-private")
    }

    // MARK: AllowedOrigins

    @Test func anOriginWithoutASchemeStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AllowedOrigins.only(URL(string: "https://api.example.test")!, URL(string: "api.spotify.com")!)
        }
        Self.check(result, names: "each URL of AllowedOrigins.only")
        if let result {
            #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("not api.spotify.com"))
        }
    }

    @Test func anEntryWithoutAHostIsShownWithoutItsUserPartOrQuery() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AllowedOrigins.only(URL(string: "//user:hunter2-secret@/path?key=query-secret")!)
        }
        Self.check(result, names: "each URL of AllowedOrigins.only")
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(!text.contains("hunter2-secret") && !text.contains("query-secret"))
    }

    /// `user:password@api.example.test` without a scheme reads as scheme `user`: nothing of it is shown.
    @Test func anEntryWithAnAtSignAndNoHostShowsNothingOfIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AllowedOrigins.only([URL(string: "user:pw-secret-0123@api.example.test")!])
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(text.contains("AllowedOrigins.only") && !text.contains("pw-secret-0123"))
    }

    @Test func anEmptyListIsAcceptedAndSignsNothing() async throws {
        let service = TokenService()
        service.store(service.authentication("valid"))
        let closure = Closure(options: .init(origins: .only([])), find: service.find)
        let sent = try await closure.authorize(URLRequest(url: URL(string: "https://api.example.test/v1")!))
        #expect(sent.value(forHTTPHeaderField: "Authorization") == nil)
    }
}
