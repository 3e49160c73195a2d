import Foundation

/// A strict HTTP/1.1 request reader: pure (bytes in, a request or a refusal out), so it is tested
/// without sockets; `RequestReader` reads a request as it arrives. What it refuses, and with what:
///
/// - a request line that is not `METHOD SP /target SP HTTP/1.x` (one space each, an upper-case token,
///   an origin-form target of visible ASCII) -> 400; another HTTP version -> 505; a target longer than
///   `maxTargetBytes` -> 414;
/// - header lines that are not `name: value` with a token name, folded lines, control characters,
///   more than `maxHeaderCount` of them or more than `maxHeaderBytes` in all -> 400 / 431;
/// - HTTP/1.1 without `Host` -> 400; `Transfer-Encoding` (chunked bodies) -> 501; a `Content-Length`
///   that is not digits, or two that differ -> 400; a body over `maxBodyBytes` -> 413, refused before
///   it is read;
/// - a path whose percent-escapes are broken, or that decodes to NUL or invalid UTF-8 -> 400.
public enum RequestParser {
    /// What a buffer holds so far.
    public enum Outcome: Sendable {
        /// Not a whole request yet.
        case needMore
        /// A whole request, and how many bytes of the buffer it took.
        case complete(HTTPRequest, consumed: Int)
        /// A request to refuse with this status and reason.
        case refused(HTTPStatus, String)
    }

    /// Reads a request from the bytes a client sent so far (a `RequestReader` fed them in one piece).
    /// - Parameters:
    ///   - bytes: What the connection has read, from its start.
    ///   - limits: The bounds the request must keep.
    /// - Returns: `needMore` until the request is whole, `complete` with the request and how many bytes it
    ///   took, or `refused` with the status and reason to answer with as soon as it breaks a rule.
    public static func parse(_ bytes: [UInt8], limits: HTTPLimits) -> Outcome {
        var reader = RequestReader(limits: limits)
        return reader.append(bytes)
    }

    /// A request's line, headers, decoded path and query, and where its body starts and how long it is.
    struct Head {
        var method: String, target: String, path: String
        var query: [String: String]
        var headers: [(name: String, value: String)]
        var bodyStart: Int, bodyLength: Int
    }

    enum Line {
        case line(method: String, target: String, version: String)
        case refused(HTTPStatus, String)
    }

    enum HeadOutcome {
        case head(Head)
        case refused(HTTPStatus, String)
    }

    /// The header lines (the bytes after the request line's CRLF, up to the blank line) checked and read,
    /// with the request line already read; `bodyStart` is where the body begins in the connection's bytes.
    static func head(
        line: (method: String, target: String, version: String), headerLines: ArraySlice<UInt8>, bodyStart: Int, limits: HTTPLimits
    ) -> HeadOutcome {
        let lines = headerLines.isEmpty ? [] : split(headerLines)
        guard lines.count <= limits.maxHeaderCount else { return .refused(.headersTooLarge, "more than \(limits.maxHeaderCount) header lines") }
        var headers: [(name: String, value: String)] = []
        for raw in lines {
            guard let first = raw.first, first != 32, first != 9 else { return .refused(.badRequest, "folded header lines are not accepted") }
            guard let colon = raw.firstIndex(of: 58), colon > raw.startIndex else { return .refused(.badRequest, "a header line without a name and a colon") }
            let name = raw[..<colon]
            guard name.allSatisfy(isTokenByte) else { return .refused(.badRequest, "a header name with characters a token cannot hold") }
            let value = raw[(colon + 1)...]
            // Field values: visible ASCII, spaces, tabs and UTF-8 bytes; no control characters.
            guard value.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else { return .refused(.badRequest, "a header value with a control character") }
            guard let nameText = String(validating: name, as: UTF8.self),
                let valueText = String(validating: value, as: UTF8.self)
            else { return .refused(.badRequest, "a header that is not UTF-8") }
            headers.append((nameText, valueText.trimmingCharacters(in: [" ", "\t"])))
        }
        func all(_ name: String) -> [String] { headers.filter { $0.name.lowercased() == name }.map(\.value) }
        if line.version == "HTTP/1.1" && all("host").count != 1 { return .refused(.badRequest, "an HTTP/1.1 request needs exactly one Host header") }
        if !all("transfer-encoding").isEmpty { return .refused(.notImplemented, "Transfer-Encoding is not accepted; send a Content-Length") }
        let lengths = Set(all("content-length"))
        guard lengths.count <= 1 else { return .refused(.badRequest, "Content-Length headers that differ") }
        var length = 0
        if let text = lengths.first {
            guard !text.isEmpty, text.count <= 12, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = Int(text) else {
                return .refused(.badRequest, "a Content-Length that is not a number of bytes")
            }
            length = value
        }
        guard length <= limits.maxBodyBytes else { return .refused(.payloadTooLarge, "the body exceeds \(limits.maxBodyBytes) bytes") }
        let (rawPath, rawQuery) = splitTarget(line.target)
        guard let path = percentDecode(rawPath, plusIsSpace: false), !path.contains("\0") else {
            return .refused(.badRequest, "a path with a broken percent-escape, a NUL or bytes that are not UTF-8")
        }
        var query: [String: String] = [:]
        for pair in rawQuery.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = percentDecode(String(parts[0]), plusIsSpace: true),
                let value = percentDecode(parts.count > 1 ? String(parts[1]) : "", plusIsSpace: true)
            else {
                return .refused(.badRequest, "a query with a broken percent-escape")
            }
            query[key] = value
        }
        return .head(
            Head(
                method: line.method, target: line.target, path: path, query: query, headers: headers, bodyStart: bodyStart,
                bodyLength: length))
    }

    static func requestLine(_ bytes: ArraySlice<UInt8>, limits: HTTPLimits) -> Line {
        let parts = bytes.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .refused(.badRequest, "the request line is not METHOD TARGET VERSION") }
        let method = parts[0], target = parts[1], version = parts[2]
        guard !method.isEmpty, method.count <= 16, method.allSatisfy({ $0 >= 65 && $0 <= 90 }) else {
            return .refused(.badRequest, "the method is not an upper-case token")
        }
        guard target.count <= limits.maxTargetBytes else { return .refused(.uriTooLong, "the request target exceeds \(limits.maxTargetBytes) bytes") }
        guard target.first == 47, target.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            return .refused(.badRequest, "the target is not a path starting with / in visible ASCII")
        }
        let versionText = String(decoding: version, as: UTF8.self)
        guard versionText.hasPrefix("HTTP/") else { return .refused(.badRequest, "the request line does not end in an HTTP version") }
        guard versionText == "HTTP/1.1" || versionText == "HTTP/1.0" else { return .refused(.versionNotSupported, "only HTTP/1.1 and HTTP/1.0 are served") }
        return .line(method: String(decoding: method, as: UTF8.self), target: String(decoding: target, as: UTF8.self), version: versionText)
    }

    /// `/a/b?x=1#frag` -> ("/a/b", "x=1").
    static func splitTarget(_ target: String) -> (path: String, query: String) {
        let withoutFragment = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
        let parts = withoutFragment.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
    }

    /// Decodes `%XX` escapes (and `+` as a space in queries); nil for a broken escape or bytes that are
    /// not UTF-8.
    public static func percentDecode(_ text: String, plusIsSpace: Bool) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == 37 {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                out.append(high << 4 | low)
            } else if byte == 43 && plusIsSpace {
                out.append(32)
            } else {
                out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }

    /// Lines separated by CRLF (a bare LF is refused by the header checks: it stays inside a line).
    private static func split(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var index = head.startIndex
        while index + 1 < head.endIndex {
            if head[index] == 13 && head[index + 1] == 10 {
                lines.append(head[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(head[start...])
        return lines
    }

    /// RFC 9110 token characters.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 48...57, 65...90, 97...122: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}

/// One request read as its bytes arrive, with work linear in its size however it is cut: each byte is
/// looked at once while the end of the head (the blank line) is searched for, the request line is
/// checked once, as soon as it ends, the head is parsed once, when it is whole, and the body's bytes are
/// only counted. What it refuses is what `RequestParser` refuses.
public struct RequestReader: Sendable {
    /// The bounds the request must keep.
    public let limits: HTTPLimits
    private var bytes: [UInt8] = []
    /// Where the search for the end of the head goes on.
    private var searched = 0
    private var line: (method: String, target: String, version: String)?
    /// Where the request line's CRLF starts (once seen).
    private var lineEnd: Int?
    private var head: RequestParser.Head?
    private var finished: RequestParser.Outcome?
    /// Bytes looked at while searching for the ends of the request line and the head: never more than
    /// the bytes of the head (the blank line included), however the request was cut.
    private(set) var scannedByteCount = 0
    /// How many times the head was parsed: once at most.
    private(set) var headParseCount = 0

    /// A reader that has read nothing yet.
    public init(limits: HTTPLimits) { self.limits = limits }

    /// Takes the next bytes the connection read.
    /// - Parameter chunk: What came after the bytes appended so far.
    /// - Returns: `needMore` until the request is whole, `complete` with the request and how many bytes
    ///   it took, or `refused` as soon as it breaks a rule; once complete or refused, the same outcome
    ///   again (later bytes are ignored).
    public mutating func append(_ chunk: some Collection<UInt8>) -> RequestParser.Outcome {
        if let finished { return finished }
        bytes.append(contentsOf: chunk)
        if head == nil {
            switch searchHeadEnd() {
            case .refused(let status, let reason): return finish(.refused(status, reason))
            case .needMore: return .needMore
            case .headRead: break
            }
        }
        guard let head else { return .needMore }
        let end = head.bodyStart + head.bodyLength
        guard bytes.count >= end else { return .needMore }
        let request = HTTPRequest(
            method: head.method, target: head.target, path: head.path, query: head.query, headers: head.headers,
            body: Array(bytes[head.bodyStart..<end]))
        return finish(.complete(request, consumed: end))
    }

    private mutating func finish(_ outcome: RequestParser.Outcome) -> RequestParser.Outcome {
        finished = outcome
        return outcome
    }

    private enum Search {
        case needMore, headRead
        case refused(HTTPStatus, String)
    }

    /// Goes on searching where the last search stopped; parses the head when its end is found.
    private mutating func searchHeadEnd() -> Search {
        let limit = min(bytes.count, limits.maxHeaderBytes + 4)
        while searched < limit {
            let index = searched
            searched += 1
            scannedByteCount += 1
            guard index >= 1, bytes[index] == 10, bytes[index - 1] == 13 else { continue }
            if lineEnd == nil {
                lineEnd = index - 1
                switch RequestParser.requestLine(bytes[..<(index - 1)], limits: limits) {
                case .refused(let status, let reason): return .refused(status, reason)
                case .line(let method, let target, let version): line = (method, target, version)
                }
            }
            guard index >= 3, bytes[index - 2] == 10, bytes[index - 3] == 13, let line, let lineEnd else { continue }
            headParseCount += 1
            let headerStart = lineEnd + 2, headEnd = index - 3
            let lines = headerStart < headEnd ? bytes[headerStart..<headEnd] : []
            switch RequestParser.head(line: line, headerLines: lines, bodyStart: index + 1, limits: limits) {
            case .refused(let status, let reason): return .refused(status, reason)
            case .head(let parsed): head = parsed
            }
            return .headRead
        }
        // A request line alone that is already too long need not wait for more.
        if lineEnd == nil && bytes.count > limits.maxTargetBytes + 32 {
            return .refused(.uriTooLong, "the request target exceeds \(limits.maxTargetBytes) bytes")
        }
        if bytes.count >= limits.maxHeaderBytes + 4 {
            return .refused(.headersTooLarge, "the request line and headers exceed \(limits.maxHeaderBytes) bytes")
        }
        return .needMore
    }
}
