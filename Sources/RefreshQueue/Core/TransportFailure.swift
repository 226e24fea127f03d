/// An error that may stand for a network failure (offline, timed out, connection lost) rather
/// than a refusal by the server.
///
/// ``RefreshingRequestClosure`` does not count refreshes that failed this way against its
/// ``RefreshWindow``: a phone that was offline must not lock itself out once it is back. A bare
/// `URLError` counts as a transport failure without this; adopt it in errors that wrap one.
public protocol TransportFailure: Error {
    /// Whether the error is a network failure.
    var isTransportFailure: Bool { get }
}
