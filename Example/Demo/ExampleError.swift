/// What can go wrong in the walkthrough itself.
enum ExampleError: Error, CustomStringConvertible {
    case authorization(String)
    case usage(String)
    case worker(String)

    var description: String {
        switch self {
        case .authorization(let reason): return "authorization failed: \(reason)"
        case .usage(let message): return message
        case .worker(let reason): return "worker process failed: \(reason)"
        }
    }
}
