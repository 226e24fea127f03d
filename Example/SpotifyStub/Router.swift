/// Sends each request to the endpoint that owns its path.
///
/// Runs on the event-loop thread; endpoints take the state lock only for the moment they touch
/// shared state, and never while doing I/O.
struct Router {
    /// Registered clients by `client_id`.
    let clients: [String: SpotifyStub.Client]
    /// The state shared with the public API.
    let state: Protected<StubState>

    /// Decides what to do with `request`.
    func route(_ request: HTTPRequest) -> Reply {
        if request.path == "/v1" || request.path.hasPrefix("/v1/") {
            return .immediately(.respond(WebAPIEndpoint(state: state).handle(request)))
        }
        switch request.path {
        case "/authorize":
            return .immediately(.respond(AuthorizeEndpoint(clients: clients, state: state).handle(request)))
        case "/api/token":
            return TokenEndpoint(clients: clients, state: state).handle(request)
        default:
            return .immediately(.respond(WebAPIEndpoint.error(status: 404, message: "Service not found")))
        }
    }
}
