import Capture
import Foundation

/// Where events go and commands come from: `mqtt://HOST[:PORT]/PREFIX` (`mqtts://` for TLS), checked
/// part by part before anything uses it. The prefix is the first levels of every topic
/// (`PREFIX/photo-saved`, `PREFIX/available`, `PREFIX/command` ...), as Frigate's `frigate/...`.
public struct MQTTURL: Hashable, Sendable, CustomStringConvertible {
    public enum Scheme: String, Sendable {
        case mqtt, mqtts
    }

    public var scheme: Scheme
    /// A host name, an IPv4 address or an IPv6 address (without brackets).
    public var host: String
    public var port: Int
    /// The topic prefix: one or more levels of letters, digits, `-`, `_` and `.`, joined by `/`.
    public var prefix: String

    /// The longest prefix taken, in bytes (a topic may have 65535; events add their names).
    public static let maximumPrefixBytes = 200

    /// Reads `mqtt[s]://HOST[:PORT]/PREFIX`. Typed error: `invalidMqttUrl`, saying which part is wrong.
    public init(_ text: String) throws(CaptureError) {
        func invalid(_ reason: String) -> CaptureError { .invalidMqttUrl(url: text, reason: reason) }
        guard let schemeEnd = text.range(of: "://") else { throw invalid("it has no scheme (mqtt:// or mqtts://)") }
        guard let scheme = Scheme(rawValue: String(text[..<schemeEnd.lowerBound]).lowercased()) else {
            throw invalid("the scheme must be mqtt or mqtts")
        }
        let rest = text[schemeEnd.upperBound...]
        guard !rest.contains(where: { $0 == " " || $0 == "\t" || $0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f } }) else {
            throw invalid("it contains spaces or control characters")
        }
        guard !rest.contains("?") else { throw invalid("it takes no query; give the options as --mqtt-... options") }
        guard !rest.contains("#") else { throw invalid("'#' (a fragment, or MQTT's wildcard) has no place in it") }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard !authority.contains("@") else {
            throw invalid("it takes no user name or password; use --mqtt-user and --mqtt-password-file")
        }
        var hostPart: Substring
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("an IPv6 address must end with ]") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            guard !hostPart.isEmpty, hostPart.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw invalid("'\(hostPart)' is not an IPv6 address")
            }
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("only :PORT may follow the IPv6 address") }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        } else {
            hostPart = authority
        }
        guard !hostPart.isEmpty else { throw invalid("it names no broker host") }
        if !authority.hasPrefix("[") {
            guard hostPart.count <= 253,
                hostPart.split(separator: ".", omittingEmptySubsequences: false).allSatisfy({ label in
                    (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                        && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
                })
            else {
                throw invalid("'\(hostPart)' is not a host name or an IPv4 address (letters, digits, - and ., labels of 1 to 63 characters)")
            }
        }
        var port = scheme == .mqtt ? 1883 : 8883
        if let portPart {
            guard let value = Int(portPart), (1...65535).contains(value), portPart.allSatisfy(\.isASCII) else {
                throw invalid("the port must be a number from 1 to 65535")
            }
            port = value
        }
        guard slash < rest.endIndex else { throw invalid("it has no topic prefix (mqtt://HOST/PREFIX)") }
        let prefix = rest[rest.index(after: slash)...]
        guard !prefix.isEmpty else { throw invalid("the topic prefix is empty") }
        guard prefix.utf8.count <= Self.maximumPrefixBytes else {
            throw invalid("the topic prefix has \(prefix.utf8.count) bytes; at most \(Self.maximumPrefixBytes)")
        }
        guard !prefix.contains("+") else { throw invalid("the topic prefix contains '+', MQTT's wildcard") }
        guard !prefix.hasPrefix("$") else { throw invalid("a topic prefix starting with $ is the broker's") }
        let levels = prefix.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.allSatisfy({ !$0.isEmpty }) else { throw invalid("the topic prefix has an empty level (// or a / at an end)") }
        guard levels.allSatisfy({ $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") } }) else {
            throw invalid("the topic prefix may hold letters, digits, -, _ and . in levels joined by /")
        }
        self.scheme = scheme
        self.host = String(hostPart)
        self.port = port
        self.prefix = String(prefix)
    }

    /// `HOST:PORT` (brackets around an IPv6 address).
    public var broker: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    public var description: String { "\(scheme.rawValue)://\(broker)/\(prefix)" }

    /// The topic of `leaf` under the prefix.
    public func topic(_ leaf: String) -> String { "\(prefix)/\(leaf)" }
}

/// How the MQTT client connects, as `mosquitto_pub` takes it: credentials and TLS.
public struct MQTTOptions: Hashable, Sendable {
    /// `--mqtt-user`: the user name sent to the broker.
    public var user: String?
    /// `--mqtt-password-file`: a file whose first line is the password (never on the command line,
    /// where other users of the machine could read it).
    public var passwordFile: String?
    /// `--mqtt-cafile`: the certificate authorities to trust (PEM); turns TLS on.
    public var caFile: String?
    /// `--mqtt-capath`: a directory of certificate authorities (hashed names, `c_rehash`); turns TLS on.
    public var caPath: String?
    /// `--mqtt-cert` / `--mqtt-key`: a client certificate and its key (PEM), for brokers that ask for one.
    public var certFile: String?
    public var keyFile: String?
    /// `--mqtt-insecure`: do not check that the broker's certificate names its host (testing only).
    public var insecure = false
    /// `--mqtt-id`: the client id (default `c-HOSTNAME-PID-N`, N counting the process's clients); at
    /// most 23 bytes for old brokers.
    public var clientID: String?
    /// Messages kept while the broker is away; beyond it the oldest are dropped and counted
    /// (`events-dropped`). Default 10000.
    public var queueLimit = 10_000
    /// Seconds between keep-alive pings; the broker declares the client gone (and sends its last
    /// will) after 1.5 times this without a word. Default 10.
    public var keepAlive = 10

    public init(
        user: String? = nil, passwordFile: String? = nil, caFile: String? = nil, caPath: String? = nil,
        certFile: String? = nil, keyFile: String? = nil, insecure: Bool = false, clientID: String? = nil
    ) {
        self.user = user
        self.passwordFile = passwordFile
        self.caFile = caFile
        self.caPath = caPath
        self.certFile = certFile
        self.keyFile = keyFile
        self.insecure = insecure
        self.clientID = clientID
    }

    private static let clientNumbers = Locked(0)

    /// True when the connection uses TLS (an mqtts:// URL, or a CA given).
    func usesTLS(_ url: MQTTURL) -> Bool { url.scheme == .mqtts || caFile != nil || caPath != nil }

    /// Checks the options and reads the password. Typed error: `invalidMqttOptions`.
    func resolved(for url: MQTTURL) throws(CaptureError) -> (password: String?, clientID: String) {
        func readable(_ path: String, _ what: String, directory: Bool = false) throws(CaptureError) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue == directory,
                FileManager.default.isReadableFile(atPath: path)
            else {
                throw .invalidMqttOptions(reason: "the \(what) \(path) is not a readable \(directory ? "directory" : "file")")
            }
        }
        var password: String?
        if let passwordFile {
            try readable(passwordFile, "password file")
            // A regular file, read no further than the limit: /dev/zero or a FIFO named here would
            // otherwise be read without end (or wait for a writer).
            let regular = (try? FileManager.default.attributesOfItem(atPath: passwordFile)[.type] as? FileAttributeType) == .typeRegular
            let handle = regular ? FileHandle(forReadingAtPath: passwordFile) : nil
            defer { try? handle?.close() }
            guard let data = try? handle?.read(upToCount: 4097), data.count <= 4096,
                let text = String(data: data, encoding: .utf8)
            else {
                throw .invalidMqttOptions(reason: "the password file \(passwordFile) is not a short UTF-8 text file")
            }
            // Split at the newline scalar: as Characters, a file's "\r\n" is one, never "\n", and a
            // password file written with CRLF endings gave its whole text as the password.
            let line = text.unicodeScalars.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            password = line.hasSuffix("\r") ? String(line.unicodeScalars.dropLast()) : line
        }
        if password != nil && user == nil { throw .invalidMqttOptions(reason: "a password needs a user name (--mqtt-user)") }
        if let user, user.isEmpty || user.utf8.count > 256 { throw .invalidMqttOptions(reason: "the user name must have 1 to 256 bytes") }
        if let caFile { try readable(caFile, "CA file") }
        if let caPath { try readable(caPath, "CA directory", directory: true) }
        if (certFile == nil) != (keyFile == nil) { throw .invalidMqttOptions(reason: "a client certificate needs its key, and the key its certificate") }
        if let certFile { try readable(certFile, "certificate file") }
        if let keyFile { try readable(keyFile, "key file") }
        if (certFile != nil || insecure) && !usesTLS(url) {
            throw .invalidMqttOptions(reason: "--mqtt-cert and --mqtt-insecure need TLS: an mqtts:// URL or --mqtt-cafile/--mqtt-capath")
        }
        if !(1...1_000_000).contains(queueLimit) { throw .invalidMqttOptions(reason: "the queue limit must be 1 to 1000000 messages") }
        if !(2...3600).contains(keepAlive) { throw .invalidMqttOptions(reason: "the keep-alive must be 2 to 3600 seconds") }
        // A broker keeps one connection per client id (a second one with the same id closes the first):
        // each client of the process gets an id of its own.
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let number = Self.clientNumbers.withLock { number -> Int in
            number += 1
            return number
        }
        let id = clientID ?? String("c-\(host)".prefix(8)) + "-\(getpid())-\(number % 10000)"
        guard (1...23).contains(id.utf8.count), id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw .invalidMqttOptions(reason: "the client id must have 1 to 23 letters, digits, - or _")
        }
        return (password, id)
    }
}
