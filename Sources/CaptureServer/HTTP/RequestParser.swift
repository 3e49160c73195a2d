import Foundation

/// A strict HTTP/1.1 request reader: pure (bytes in, a request or a refusal out), so it is tested
/// without sockets. What it refuses, and with what:
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
        /// Not a whole request yet; `bodyExpected` once the headers are read.
        case needMore
        /// A whole request, and how many bytes of the buffer it took.
        case complete(HTTPRequest, consumed: Int)
        /// A request to refuse with this status and reason.
        case refused(HTTPStatus, String)
    }

    /// Reads a request from the bytes a client sent so far.
    /// - Parameters:
    ///   - bytes: What the connection has read, from its start.
    ///   - limits: The bounds the request must keep.
    /// - Returns: `needMore` until the request is whole, `complete` with the request and how many bytes it
    ///   took, or `refused` with the status and reason to answer with as soon as it breaks a rule.
    public static func parse(_ bytes: [UInt8], limits: HTTPLimits) -> Outcome {
        guard let headerEnd = find(crlfcrlf, in: bytes, limit: limits.maxHeaderBytes + 4) else {
            // A request line alone that is already too long or malformed need not wait for more.
            if let lineEnd = find([13, 10], in: bytes, limit: bytes.count) {
                if case .refused(let status, let reason) = requestLine(Array(bytes[..<lineEnd]), limits: limits) { return .refused(status, reason) }
            } else if bytes.count > limits.maxTargetBytes + 32 {
                return .refused(.uriTooLong, "the request target exceeds \(limits.maxTargetBytes) bytes")
            }
            if bytes.count >= limits.maxHeaderBytes + 4 {
                return .refused(.headersTooLarge, "the request line and headers exceed \(limits.maxHeaderBytes) bytes")
            }
            return .needMore
        }
        if headerEnd > limits.maxHeaderBytes { return .refused(.headersTooLarge, "the request line and headers exceed \(limits.maxHeaderBytes) bytes") }
        let head = Array(bytes[..<headerEnd])
        var lines = split(head)
        guard !lines.isEmpty else { return .refused(.badRequest, "empty request") }
        let first = lines.removeFirst()
        let line: (method: String, target: String, version: String)
        switch requestLine(first, limits: limits) {
        case .refused(let status, let reason): return .refused(status, reason)
        case .line(let method, let target, let version): line = (method, target, version)
        }
        guard lines.count <= limits.maxHeaderCount else { return .refused(.headersTooLarge, "more than \(limits.maxHeaderCount) header lines") }
        var headers: [(name: String, value: String)] = []
        for raw in lines {
            guard let first = raw.first, first != 32, first != 9 else { return .refused(.badRequest, "folded header lines are not accepted") }
            guard let colon = raw.firstIndex(of: 58), colon > 0 else { return .refused(.badRequest, "a header line without a name and a colon") }
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
        let bodyStart = headerEnd + 4
        guard bytes.count >= bodyStart + length else { return .needMore }
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
        let request = HTTPRequest(
            method: line.method, target: line.target, path: path, query: query, headers: headers,
            body: Array(bytes[bodyStart..<(bodyStart + length)]))
        return .complete(request, consumed: bodyStart + length)
    }

    private enum Line {
        case line(method: String, target: String, version: String)
        case refused(HTTPStatus, String)
    }

    private static func requestLine(_ bytes: [UInt8], limits: HTTPLimits) -> Line {
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

    private static let crlfcrlf: [UInt8] = [13, 10, 13, 10]

    private static func find(_ needle: [UInt8], in bytes: [UInt8], limit: Int) -> Int? {
        let end = min(bytes.count, limit) - needle.count
        guard end >= 0 else { return nil }
        var index = 0
        while index <= end {
            if bytes[index] == needle[0] && Array(bytes[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }

    /// Lines separated by CRLF (a bare LF is refused by the header checks: it stays inside a line).
    private static func split(_ head: [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var start = 0
        var index = 0
        while index + 1 < head.count {
            if head[index] == 13 && head[index + 1] == 10 {
                lines.append(Array(head[start..<index]))
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(Array(head[start...]))
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
