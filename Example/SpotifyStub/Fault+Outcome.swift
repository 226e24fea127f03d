extension Fault {
    /// How this fault looks on the wire.
    ///
    /// Bodies are realistic enough that a client which ignores the status code or the framing
    /// error would be fooled, which is exactly what a test wants to catch.
    var outcome: Outcome {
        switch self {
        case .internalServerError:
            return .respond(
                .json(
                    status: 500,
                    .object([
                        ("error", .string("server_error")), ("error_description", .string("Internal server error")),
                    ]),
                    headers: TokenEndpoint.noStore
                )
            )
        case .serviceUnavailable(let retryAfter):
            return .respond(
                .json(
                    status: 503,
                    .object([
                        ("error", .string("temporarily_unavailable")),
                        ("error_description", .string("Service unavailable")),
                    ]),
                    headers: TokenEndpoint.noStore + [(name: "Retry-After", value: String(max(0, retryAfter)))]
                )
            )
        case .rateLimited(let retryAfter):
            return .respond(TokenEndpoint.tooManyRequests(retryAfter: retryAfter))
        case .invalidGrant:
            return .respond(TokenEndpoint.error(status: 400, "invalid_grant", "Invalid refresh token"))
        case .malformedJSON:
            return .respond(
                HTTPResponse(
                    status: 200,
                    headers: [(name: "Content-Type", value: "application/json; charset=utf-8")] + TokenEndpoint.noStore,
                    body: Array("{\"access_token\":\"BQ-not-json\",\"token_type\":\"Bearer\",\"expires_in\":36".utf8)
                )
            )
        case .truncatedBody:
            return .truncate(
                .json(
                    status: 200,
                    .object([
                        ("access_token", .string("BQ-truncated-response")),
                        ("token_type", .string("Bearer")),
                        ("scope", .string("")),
                        ("expires_in", .int(3600)),
                    ]),
                    headers: TokenEndpoint.noStore
                )
            )
        case .closeWithoutResponse:
            return .closeWithoutResponse
        case .hang:
            return .hang
        }
    }
}
