import Foundation

/// What a request to a ``LoopbackRedirectReceiver`` asks for, read from its head, and the answers
/// it gets. No socket here: the parsing is tested on its own.
enum LoopbackCallbackRequest: Equatable {
    /// `GET` of the callback path: `target` is the request target (path and query).
    case callback(target: String)
    /// Anything else, answered with `status` (404, 405, 431) and the wait goes on.
    case other(status: Int)
    /// No complete request head came (the connection closed, or its time ran out).
    case unreadable

    /// Reads `head`, the bytes received up to the end of the head or the size limit, for `path`.
    init(head: LoopbackHead, path: String) {
        switch head {
        case .unreadable:
            self = .unreadable
        case .tooLarge:
            self = .other(status: 431)
        case .complete(let bytes):
            let line = bytes.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
            let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard parts.count == 3, parts[2].starts(with: Array("HTTP/1.".utf8)),
                let target = String(bytes: parts[1], encoding: .utf8), target.hasPrefix("/")
            else {
                self = .other(status: 400)
                return
            }
            let requestPath = target.prefix { $0 != "?" && $0 != "#" }
            guard requestPath == path else {
                self = .other(status: 404)
                return
            }
            guard parts[0].elementsEqual("GET".utf8) else {
                self = .other(status: 405)
                return
            }
            self = .callback(target: target)
        }
    }

    /// The page that ends the login in the browser. It names nothing from the redirect: the code
    /// and state stay out of it, and nothing the request carried is echoed back.
    static func page(loggedIn: Bool) -> [UInt8] {
        let message =
            loggedIn
            ? "You are logged in. You may close this window and return to the app."
            : "The login did not complete. Return to the app to try again."
        let body = """
            <!doctype html><html><head><meta charset="utf-8"><title>\(loggedIn ? "Logged in" : "Login failed")</title>\
            </head><body><p>\(message)</p></body></html>
            """
        return response(status: loggedIn ? 200 : 400, contentType: "text/html; charset=utf-8", body: body)
    }

    /// A short plain answer for a request that is not the callback.
    static func plain(status: Int) -> [UInt8] {
        response(status: status, contentType: "text/plain; charset=utf-8", body: "\(status)\n")
    }

    private static func response(status: Int, contentType: String, body: String) -> [UInt8] {
        let reasons = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"]
        let reason = reasons[status] ?? (status == 431 ? "Request Header Fields Too Large" : "Error")
        let head =
            "HTTP/1.1 \(status) \(reason)\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
        return Array((head + body).utf8)
    }
}

/// The head of a request, as far as it was read.
enum LoopbackHead: Equatable {
    /// Up to and including the blank line that ends the head.
    case complete([UInt8])
    /// More than the limit came without a blank line.
    case tooLarge
    /// The connection closed, or its time ran out, first.
    case unreadable
}
