import Foundation

#if !FUZZING
@testable import SpotifyStub
#endif

/// The stub's HTTP request parser: every byte a client (or an attacker) sends the test server.
enum StubFuzzTargets {
    static let all = [FuzzTarget(name: "stub-http-request", check: httpRequest)]

    /// A request found at the front of the bytes is framed exactly (the same request from just its
    /// own bytes, nothing from one byte fewer), within the size limits, with header names that
    /// are lower-case tokens and no control character in any value.
    static func httpRequest(_ data: Data) -> [String] {
        let buffer = [UInt8](data)
        guard case .complete(let request, let end) = HTTPParser.parse(buffer, from: 0) else { return [] }
        var findings: [String] = []
        if end <= 0 || end > buffer.count {
            return ["a request ends at \(end) of \(buffer.count) bytes"]
        }
        if request.body.count > HTTPParser.maximumBodyBytes {
            findings.append("a body of \(request.body.count) bytes was accepted")
        }
        if request.minorVersion != 0 && request.minorVersion != 1 {
            findings.append("HTTP/1.\(request.minorVersion) was accepted")
        }
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz".unicodeScalars)
        for (name, value) in request.headers {
            if name.isEmpty || !name.unicodeScalars.allSatisfy(tokenCharacters.contains) {
                findings.append("a header name that is not a lower-case token was accepted")
            }
            if value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
                findings.append("a header value with a control character was accepted")
            }
        }
        if !(request.path == "*" || request.path.hasPrefix("/")) {
            findings.append("a request target that is not a path was accepted")
        }
        guard case .complete(let alone, let aloneEnd) = HTTPParser.parse(Array(buffer[..<end]), from: 0),
            aloneEnd == end, alone.body == request.body, alone.path == request.path
        else {
            return findings + ["the request's own bytes do not parse as the same request"]
        }
        if case .complete = HTTPParser.parse(Array(buffer[..<(end - 1)]), from: 0) {
            findings.append("a request was found in fewer bytes than it takes")
        }
        return findings
    }
}
