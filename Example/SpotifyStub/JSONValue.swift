/// A tiny JSON writer for the stub's responses.
///
/// `JSONSerialization` would do, but it does not keep key order and renders numbers differently
/// across platforms. Spotify's responses have a recognisable field order, and `expires_in` must
/// come out as `3600` for whole lifetimes and `0.3` for fractional ones, identically on Linux and
/// macOS.
indirect enum JSONValue {
    case string(String)
    case int(Int)
    /// A number that is written without a fraction when it is whole.
    case number(Double)
    case bool(Bool)
    case null
    /// An object whose members are written in the given order.
    case object([(String, JSONValue)])
    case array([JSONValue])

    /// The compact JSON text.
    var serialized: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .string(let value):
            JSONValue.writeString(value, to: &output)
        case .int(let value):
            output += String(value)
        case .number(let value):
            if !value.isFinite {
                output += "null"
            } else if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
                output += String(Int(value))
            } else {
                output += String(describing: value)
            }
        case .bool(let value):
            output += value ? "true" : "false"
        case .null:
            output += "null"
        case .object(let members):
            output += "{"
            for (index, member) in members.enumerated() {
                if index > 0 {
                    output += ","
                }
                JSONValue.writeString(member.0, to: &output)
                output += ":"
                member.1.write(to: &output)
            }
            output += "}"
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 {
                    output += ","
                }
                element.write(to: &output)
            }
            output += "]"
        }
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
