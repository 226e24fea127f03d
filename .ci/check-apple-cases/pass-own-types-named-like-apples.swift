// A type the target declares itself is not Apple's.
struct Logger: Sendable {
    func log(_ message: String) { print(message) }
}

let logger = Logger()
