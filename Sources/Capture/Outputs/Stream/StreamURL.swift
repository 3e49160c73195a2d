import Foundation

/// A stream's URL, checked part by part before anything uses it: the scheme (`rtsp`, `srt`), the host
/// (a name, an IPv4 address or a bracketed IPv6 address), the port, the path's characters (RTSP) and
/// the query's keys and values (SRT: `mode`, `latency`, `streamid`, `passphrase`). Whatever is not one
/// of those is refused with `invalidStreamUrl`; the URL only ever reaches GStreamer as a property value.
public struct StreamURL: Hashable, Sendable, CustomStringConvertible {
    /// The protocols a stream speaks.
    public enum Scheme: String, Sendable, CaseIterable {
        /// RTSP (RTP over TCP or UDP), served or published with RECORD.
        /// SRT (MPEG-TS over SRT), published as a caller or a listener.
        case rtsp, srt
    }

    /// How an SRT socket connects (`mode=`): `caller` dials the host (the default), `listener` waits on
    /// the port for a receiver to dial in.
    public enum SRTMode: String, Sendable, CaseIterable {
        /// `caller` dials the host; `listener` waits on the port.
        case caller, listener
    }

    /// `rtsp` or `srt`.
    public var scheme: Scheme
    /// The host (brackets removed from an IPv6 address); empty for an SRT listener on every address.
    public var host: String
    /// The port (554 for RTSP when the URL names none; SRT URLs must name one).
    public var port: Int
    /// The RTSP path, starting with `/` (`/live`); empty for SRT.
    public var path: String
    /// RTSP credentials (`rtsp://user:password@host/...`), sent to the server when it asks.
    public var user: String?
    /// The RTSP password that goes with `user`.
    public var password: String?
    /// SRT options.
    public var srtMode: SRTMode = .caller
    /// SRT `latency=`: the receiver's buffer in milliseconds (nil: srtsink's default).
    public var latencyMilliseconds: Int?
    /// SRT `streamid=`: the stream's name on a server that routes by it (MediaMTX: `publish:PATH`).
    public var streamID: String?
    /// SRT `passphrase=`: encrypts the connection (10 to 79 characters).
    public var passphrase: String?

    /// The default RTSP port.
    public static let defaultRTSPPort = 554

    /// Parses and checks `text`. Typed error: `invalidStreamUrl`, saying which part is wrong.
    public init(_ text: String) throws(CaptureError) {
        func invalid(_ reason: String) -> CaptureError { .invalidStreamUrl(url: Self.redacted(text), reason: reason) }
        guard text.count <= 1024 else { throw invalid("it is longer than 1024 characters") }
        guard text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7f }) else {
            throw invalid("it holds spaces, control or non-ASCII characters")
        }
        guard let schemeEnd = text.range(of: "://") else { throw invalid("it has no scheme; write rtsp://HOST:PORT/PATH or srt://HOST:PORT") }
        guard let scheme = Scheme(rawValue: text[..<schemeEnd.lowerBound].lowercased()) else {
            throw invalid("the scheme must be rtsp or srt")
        }
        self.scheme = scheme
        var rest = Substring(text[schemeEnd.upperBound...])
        if rest.contains("#") { throw invalid("a fragment (#...) has no meaning here") }
        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var authority = rest
        var path = Substring("")
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[slash...]
        }
        if let at = authority.lastIndex(of: "@") {
            guard scheme == .rtsp else { throw invalid("SRT takes no user name; use passphrase= for encryption") }
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first, !name.isEmpty, Self.isUnreserved(name), parts.count == 1 || Self.isUnreserved(parts[1]) else {
                throw invalid("the user name and password may hold only letters, digits and - . _ ~")
            }
            user = String(name)
            password = parts.count == 2 ? String(parts[1]) : nil
        }
        // Host and port.
        var hostPart = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("an IPv6 address needs its closing ]") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("only :PORT may follow an IPv6 address") }
                portText = after.dropFirst()
            }
            guard !hostPart.isEmpty, hostPart.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw invalid("'\(hostPart)' is not an IPv6 address")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        if hostPart.isEmpty {
            // srt://:PORT?mode=listener listens on every address.
            guard scheme == .srt else { throw invalid("it names no host") }
        } else if !authority.hasPrefix("[") {
            guard Self.isHostName(hostPart) else {
                throw invalid("'\(hostPart)' is not a host name or an IPv4 address (letters, digits, - and ., labels of 1 to 63 characters)")
            }
        }
        host = String(hostPart)
        if let portText {
            guard let value = Int(portText), portText.allSatisfy(\.isASCII), (1...65535).contains(value) else {
                throw invalid("the port must be a number from 1 to 65535, not '\(portText)'")
            }
            port = value
        } else {
            guard scheme == .rtsp else { throw invalid("an SRT URL needs a port: srt://HOST:PORT") }
            port = Self.defaultRTSPPort
        }
        // Path.
        switch scheme {
        case .rtsp:
            guard path.count > 1 else { throw invalid("it needs a path naming the stream, like rtsp://HOST:PORT/live") }
            let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            guard segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && Self.isUnreserved($0) }) else {
                throw invalid("the path may hold only letters, digits, - . _ ~ and single / between names")
            }
            self.path = String(path)
            if query != nil { throw invalid("an RTSP URL takes no query (?...)") }
        case .srt:
            guard path.isEmpty || path == "/" else { throw invalid("an SRT URL has no path; name the stream with ?streamid=") }
            self.path = ""
        }
        // SRT query.
        if let query, !query.isEmpty {
            var seen = Set<Substring>()
            for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
                let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard keyValue.count == 2 else { throw invalid("'\(pair)' is not KEY=VALUE") }
                let key = keyValue[0], value = keyValue[1]
                guard seen.insert(key).inserted else { throw invalid("'\(key)' is given twice") }
                switch key {
                case "mode":
                    guard let mode = SRTMode(rawValue: String(value)) else { throw invalid("mode must be caller or listener, not '\(value)'") }
                    srtMode = mode
                case "latency":
                    guard let milliseconds = Int(value), (0...60_000).contains(milliseconds) else {
                        throw invalid("latency must be a number of milliseconds from 0 to 60000")
                    }
                    latencyMilliseconds = milliseconds
                case "streamid":
                    guard (1...512).contains(value.count), value.allSatisfy({ Self.isUnreservedCharacter($0) || ":/,=#!".contains($0) }) else {
                        throw invalid("streamid may hold 1 to 512 letters, digits and - . _ ~ : / , = # !")
                    }
                    streamID = String(value)
                case "passphrase":
                    guard (10...79).contains(value.count), Self.isUnreserved(value) else {
                        throw invalid("passphrase must be 10 to 79 letters, digits and - . _ ~")
                    }
                    passphrase = String(value)
                default:
                    throw invalid("'\(key)' is not an SRT option here; the options are mode, latency, streamid, passphrase")
                }
            }
        }
        if scheme == .srt, srtMode == .caller, host.isEmpty { throw invalid("an SRT caller needs a host to dial") }
    }

    /// The URL as written, without the password.
    public var description: String {
        var text = "\(scheme.rawValue)://"
        if let user { text += password == nil ? "\(user)@" : "\(user):***@" }
        text += hostAndPort + path
        if scheme == .srt { text += queryText(includingPassphrase: false) }
        return text
    }

    /// The URL as written, with its password and passphrase (to write it back into a file).
    public var fullDescription: String {
        var text = "\(scheme.rawValue)://"
        if let user { text += password.map { "\(user):\($0)@" } ?? "\(user)@" }
        return text + hostAndPort + path + (scheme == .srt ? queryText(includingPassphrase: true) : "")
    }

    /// The URL GStreamer is given: without credentials for RTSP (set as properties), with every SRT option.
    var gstreamerURI: String {
        "\(scheme.rawValue)://\(hostAndPort)\(path)" + (scheme == .srt ? queryText(includingPassphrase: true) : "")
    }

    var hostAndPort: String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }

    private func queryText(includingPassphrase: Bool) -> String {
        var items = ["mode=\(srtMode.rawValue)"]
        if let latencyMilliseconds { items.append("latency=\(latencyMilliseconds)") }
        if let streamID { items.append("streamid=\(streamID)") }
        if let passphrase { items.append("passphrase=\(includingPassphrase ? passphrase : "***")") }
        return "?" + items.joined(separator: "&")
    }

    /// True when the process waits for the other side to connect (an RTSP server, an SRT listener).
    var listens: Bool { scheme == .srt && srtMode == .listener }

    static func isUnreservedCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "-._~".contains(character))
    }

    static func isUnreserved(_ text: Substring) -> Bool { !text.isEmpty && text.allSatisfy(isUnreservedCharacter) }

    static func isHostName(_ text: Substring) -> Bool {
        guard text.count <= 253 else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    /// `text` with the password of an RTSP URL and an SRT passphrase hidden, for error messages.
    static func redacted(_ text: String) -> String {
        var result = text
        if let schemeEnd = result.range(of: "://"), let at = result[schemeEnd.upperBound...].firstIndex(of: "@") {
            let userInfo = result[schemeEnd.upperBound..<at]
            if let colon = userInfo.firstIndex(of: ":") { result.replaceSubrange(result.index(after: colon)..<at, with: "***") }
        }
        if let range = result.range(of: "passphrase=") {
            let end = result[range.upperBound...].firstIndex(of: "&") ?? result.endIndex
            result.replaceSubrange(range.upperBound..<end, with: "***")
        }
        return result
    }
}

/// Where a stream output sends its stream.
public enum StreamDestination: Hashable, Sendable, CustomStringConvertible {
    /// The process serves the stream: `rtsp://ADDRESS:PORT/PATH` is the URL clients read (ADDRESS is
    /// the address listened on: 127.0.0.1, 0.0.0.0 for every interface, or a host name).
    case serve(StreamURL)
    /// The process sends the stream to a server: `rtsp://HOST:PORT/PATH` (RTSP RECORD, the way
    /// MediaMTX takes a publisher) or `srt://HOST:PORT` (MPEG-TS over SRT; `?mode=listener` waits for
    /// a receiver to dial in instead).
    case publish(StreamURL)

    /// `serve` or `publish` with `url` checked: serving takes rtsp:// only.
    public static func serving(_ url: String) throws(CaptureError) -> StreamDestination {
        let parsed = try StreamURL(url)
        guard parsed.scheme == .rtsp else {
            throw .invalidStreamUrl(url: parsed.description, reason: "serve= takes an rtsp:// URL; to send over SRT use publish=\"srt://...\"")
        }
        guard parsed.user == nil else {
            throw .invalidStreamUrl(url: parsed.description, reason: "a served stream takes no credentials in its URL")
        }
        return .serve(parsed)
    }

    /// A stream sent to the server at `url` (`rtsp://HOST:PORT/PATH` with RECORD, `srt://HOST:PORT`);
    /// `invalidStreamUrl` when the URL is not one of those.
    public static func publishing(_ url: String) throws(CaptureError) -> StreamDestination {
        .publish(try StreamURL(url))
    }

    /// The URL served or published to.
    public var url: StreamURL {
        switch self {
        case .serve(let url), .publish(let url): url
        }
    }

    /// `serve URL` or `publish URL`.
    public var description: String {
        switch self {
        case .serve(let url): "serve \(url)"
        case .publish(let url): "publish \(url)"
        }
    }
}
