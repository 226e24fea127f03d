/// What a connection should do with a request, as decided by the router.
///
/// Faults need more than a response value (close now, send half, never answer), and latency
/// needs the answer to be computed later, so endpoints return these instead of plain responses.
enum Reply {
    /// Act on `outcome` right away.
    case immediately(Outcome)
    /// Wait `seconds` on the event loop's timer, then call `produce` and act on its outcome.
    /// Producing late means tokens are issued (and their lifetime starts) when the answer is sent.
    case after(seconds: Double, produce: () -> Outcome)
}

/// The final form of an answer on the wire.
enum Outcome {
    /// Send the response; keep the connection if the client wants to.
    case respond(HTTPResponse)
    /// Send the head and only part of the body, then close: the `Content-Length` stays a lie.
    case truncate(HTTPResponse)
    /// Send nothing and close the connection.
    case closeWithoutResponse
    /// Send nothing, ever; the connection stays open until the client closes it or the stub stops.
    case hang
}
