import Foundation

/// Bounds of what the server accepts and keeps: a request larger than these is refused with its
/// status (431, 414, 413), a connection over `maxConnections` with 503, a request not whole within
/// `readTimeout` with 408 (then the connection is closed), and a client that does not read within
/// `writeTimeout` is closed.
public struct HTTPLimits: Sendable, Hashable {
    /// The request line and headers, in bytes (431 beyond).
    public var maxHeaderBytes = 16 * 1024
    /// Header lines (431 beyond).
    public var maxHeaderCount = 64
    /// The request target, in bytes (414 beyond).
    public var maxTargetBytes = 2048
    /// A request body, in bytes (413 beyond). WebRTC answers are a few kilobytes.
    public var maxBodyBytes = 64 * 1024
    /// Connections open at once, streaming ones included (503 beyond).
    public var maxConnections = 64
    /// Streaming responses (event streams, MJPEG viewers, WebRTC viewers) at once (503 beyond).
    public var maxStreams = 16
    /// The socket send buffer of a streaming response, in bytes (the kernel doubles it): small, so that
    /// a viewer that falls behind loses frames at once instead of seeing them late.
    public var streamSendBuffer = 128 * 1024
    /// How long a client may take to send its whole request (line, headers and body); one that has not
    /// by then is answered `408 Request Timeout` and closed.
    public var readTimeout: Duration = .seconds(10)
    /// How long one write may wait for a client to read; a viewer that stops reading is closed after it.
    public var writeTimeout: Duration = .seconds(5)

    /// The default limits, the values above.
    public init() {}
}

/// An HTTP status the server answers with.
public struct HTTPStatus: Sendable, Hashable, CustomStringConvertible {
    /// The status code (200, 404 ...).
    public var code: Int

    /// A status of that code; `reason` knows the phrases of the statuses listed here.
    public init(_ code: Int) { self.code = code }

    /// `200 OK`.
    public static let ok = HTTPStatus(200)
    /// `204 No Content`.
    public static let noContent = HTTPStatus(204)
    /// `400 Bad Request`.
    public static let badRequest = HTTPStatus(400)
    /// `401 Unauthorized`.
    public static let unauthorized = HTTPStatus(401)
    /// `403 Forbidden`.
    public static let forbidden = HTTPStatus(403)
    /// `404 Not Found`.
    public static let notFound = HTTPStatus(404)
    /// `405 Method Not Allowed`.
    public static let methodNotAllowed = HTTPStatus(405)
    /// `408 Request Timeout`.
    public static let requestTimeout = HTTPStatus(408)
    /// `409 Conflict`.
    public static let conflict = HTTPStatus(409)
    /// `411 Length Required`.
    public static let lengthRequired = HTTPStatus(411)
    /// `413 Content Too Large`.
    public static let payloadTooLarge = HTTPStatus(413)
    /// `414 URI Too Long`.
    public static let uriTooLong = HTTPStatus(414)
    /// `415 Unsupported Media Type`.
    public static let unsupportedMediaType = HTTPStatus(415)
    /// `422 Unprocessable Content`.
    public static let unprocessable = HTTPStatus(422)
    /// `431 Request Header Fields Too Large`.
    public static let headersTooLarge = HTTPStatus(431)
    /// `500 Internal Server Error`.
    public static let internalError = HTTPStatus(500)
    /// `501 Not Implemented`.
    public static let notImplemented = HTTPStatus(501)
    /// `503 Service Unavailable`.
    public static let unavailable = HTTPStatus(503)
    /// `505 HTTP Version Not Supported`.
    public static let versionNotSupported = HTTPStatus(505)

    /// The reason phrase of the status line.
    public var reason: String {
        switch code {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }

    /// The code and reason phrase, as in the status line: `404 Not Found`.
    public var description: String { "\(code) \(reason)" }
}

/// One request, read in full (line, headers, body) before it is handled.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST` ...
    public var method: String
    /// The target as sent (`/media/IMG_0001.jpg?download=1`).
    public var target: String
    /// The path, percent-decoded (`/media/IMG 0001.jpg`).
    public var path: String
    /// The query's parameters, percent-decoded (`+` is a space); the last of a repeated name wins.
    public var query: [String: String]
    /// Header lines in order, names as sent.
    public var headers: [(name: String, value: String)]
    /// The body (`Content-Length` bytes; empty without one).
    public var body: [UInt8]

    /// A request; the parser makes these from what a client sends.
    /// - Parameters:
    ///   - method: `GET`, `POST` ...
    ///   - target: The target as sent.
    ///   - path: The path, percent-decoded.
    ///   - query: The query's parameters, percent-decoded.
    ///   - headers: Header lines in order, names as sent.
    ///   - body: The body.
    public init(
        method: String, target: String, path: String, query: [String: String] = [:],
        headers: [(name: String, value: String)] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first header of that name (case-insensitive), trimmed.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The body as a JSON object; nil when it is empty or not one.
    public var jsonObject: [String: Any]? {
        guard !body.isEmpty else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }
}

/// What a handler answers. The server adds `Content-Length`, `Connection: close` and the security
/// headers (`X-Content-Type-Options: nosniff`, `Cache-Control: no-store`, `Referrer-Policy: no-referrer`).
public struct HTTPResponse: Sendable {
    /// How the body is sent.
    public enum Body: Sendable {
        /// Bytes in memory.
        case bytes([UInt8])
        /// `length` bytes of an open file, sent from its start; the server closes the descriptor.
        case file(descriptor: Int32, length: Int64)
        /// Written as it comes by `produce`, on the connection's own thread, until it returns or a write
        /// fails (the client went away or stopped reading for `writeTimeout`). No `Content-Length`.
        case stream(@Sendable (ResponseStream) -> Void)
    }

    /// The status of the status line.
    public var status: HTTPStatus
    /// Header lines in order, besides those the server adds.
    public var headers: [(name: String, value: String)]
    /// The body and how it is sent.
    public var body: Body

    /// A response; with no arguments, an empty `200 OK`.
    /// - Parameters:
    ///   - status: The status (`.ok` by default).
    ///   - headers: Header lines in order, besides those the server adds.
    ///   - body: The body (empty by default).
    public init(status: HTTPStatus = .ok, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON document (a JSON object or array's text, already serialized).
    public static func json(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json; charset=utf-8")], body: .bytes(Array(text.utf8)))
    }

    /// A JSON object from a dictionary of JSON values.
    public static func json(_ object: [String: Any], status: HTTPStatus = .ok) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json; charset=utf-8")], body: .bytes(Array(data)))
    }

    /// An error as JSON: `{"error": NAME, "message": TEXT}`.
    public static func error(_ status: HTTPStatus, _ name: String, _ message: String) -> HTTPResponse {
        json(["error": name, "message": message], status: status)
    }

    /// Plain text.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: .bytes(Array(text.utf8)))
    }
}

/// The writing end of a streaming response.
public protocol ResponseStream: Sendable {
    /// Sends bytes; false when the client is gone (or did not read for the write timeout) or the server
    /// is stopping: the producer should return.
    func write(_ bytes: [UInt8]) -> Bool
    /// True once the server stops, a write failed, or a wait (`take(from:waiting:)`) saw the client close
    /// its connection.
    var isClosed: Bool { get }
    /// Waits up to `timeout` for what `queue` holds, as `ClientQueue.take(waiting:)` does, but returns at
    /// once, empty, when the client closes its connection (`isClosed` is then true): a client that leaves
    /// gives its place back without waiting for the next write.
    func take<Item: Sendable>(from queue: ClientQueue<Item>, waiting timeout: Duration) -> [Item]
}

extension ResponseStream {
    /// Waits on the queue alone (a stream that cannot tell when its client leaves).
    public func take<Item: Sendable>(from queue: ClientQueue<Item>, waiting timeout: Duration) -> [Item] {
        queue.take(waiting: timeout)
    }
}
