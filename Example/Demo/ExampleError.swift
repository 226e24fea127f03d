/// What can go wrong in the walkthrough itself.
enum ExampleError: Error, CustomStringConvertible {
    case notConfigured
    case authorization(String)
    case tokenEndpoint(status: Int, error: String?, description: String?)
    case malformedResponse(String)
    case usage(String)

    var description: String {
        switch self {
        case .notConfigured:
            return "the app environment was not configured"
        case .authorization(let reason):
            return "authorization failed: \(reason)"
        case .tokenEndpoint(let status, let error, let description):
            return "token endpoint answered \(status) \(error ?? "")\(description.map { ": \($0)" } ?? "")"
        case .malformedResponse(let reason):
            return "malformed response: \(reason)"
        case .usage(let message):
            return message
        }
    }
}
