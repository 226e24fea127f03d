/// A command as the server reads it: an array of bulk strings.
struct RESPCommand: Sendable {
    /// The command's name and arguments, as bytes.
    let arguments: [[UInt8]]

    /// A command of `name` and `arguments`.
    init(_ name: String, _ arguments: [String] = []) {
        self.arguments = ([name] + arguments).map { Array($0.utf8) }
    }

    /// A command whose last argument is raw bytes (a value to store).
    init(_ name: String, _ arguments: [String], value: [UInt8], _ trailing: [String] = []) {
        self.arguments = ([name] + arguments).map { Array($0.utf8) } + [value] + trailing.map { Array($0.utf8) }
    }

    /// A command given as raw bytes, its name first (values to store and compare).
    init(raw arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    /// The bytes on the wire.
    var encoded: [UInt8] {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            bytes.append(contentsOf: "$\(argument.count)\r\n".utf8)
            bytes.append(contentsOf: argument)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        return bytes
    }

    /// The command's name, for errors: never an argument, which may be a password or a token.
    var name: String { arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? "" }
}
