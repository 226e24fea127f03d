/// One reply of a Redis server, in the RESP2 protocol.
enum RESPValue: Sendable, Equatable {
    /// `+OK`: a status line.
    case simpleString(String)
    /// `-ERR …`: the server refused the command.
    case error(String)
    /// `:42`.
    case integer(Int64)
    /// `$5\r\nhello`: binary-safe bytes.
    case bulkString([UInt8])
    /// `$-1` or `*-1`: no value (a `GET` of a missing key, a `SET … NX` that did not set).
    case null
    /// `*2\r\n…`: replies within a reply (`EVAL` may answer with one).
    case array([RESPValue])
}
