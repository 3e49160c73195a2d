import Capture
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why the server could not start.
public enum ServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The listen address is not `ADDR:PORT` with a numeric IPv4 or bracketed IPv6 address (or `localhost`).
    case invalidAddress(String)
    /// The socket could not be made, bound or listened on (`errno`'s text: address in use, permission ...).
    case listenFailed(address: String, reason: String)
    /// A token was asked for but is not usable (empty, or characters a header cannot carry).
    case invalidToken(String)
    /// The media folder cannot be made or used.
    case mediaFolderUnusable(path: String, reason: String)
    /// An overlay of the web previews cannot be drawn.
    case invalidPreviewOverlay(String)

    /// A stable kebab-case name.
    public var name: String {
        switch self {
        case .invalidAddress: "invalid-address"
        case .listenFailed: "listen-failed"
        case .invalidToken: "invalid-token"
        case .mediaFolderUnusable: "media-folder-unusable"
        case .invalidPreviewOverlay: "invalid-overlay"
        }
    }

    /// A sentence saying why the server could not start, and what to change.
    public var description: String {
        switch self {
        case .invalidAddress(let text):
            "'\(FileNaming.printable(text))' is not a listen address: give ADDR:PORT, like 127.0.0.1:8080, 0.0.0.0:8080 or [::1]:8080"
        case .listenFailed(let address, let reason):
            "cannot listen on \(address): \(reason); pick another port with --listen ADDR:PORT"
        case .invalidToken(let reason):
            "the token cannot be used: \(reason)"
        case .mediaFolderUnusable(let path, let reason):
            "cannot use \(FileNaming.printable(path)) as the media folder: \(reason); pass another with --output-dir"
        case .invalidPreviewOverlay(let reason):
            "the preview overlay cannot be drawn: \(reason)"
        }
    }
}

/// Where a server listens: a numeric address (or `localhost`) and a port (0: a free one).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The numeric IPv4 or IPv6 address (`127.0.0.1`, `0.0.0.0`, `::1`), without brackets.
    public var host: String
    /// The TCP port; 0 lets the system pick a free one.
    public var port: UInt16

    /// An address from its parts, taken as given (`init(parsing:)` checks text).
    /// - Parameters:
    ///   - host: A numeric IPv4 or IPv6 address, without brackets.
    ///   - port: The port; 0 for a free one.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:8080`, `0.0.0.0:8080`, `[::1]:8080`, `localhost:8080`, or a bare port (`8080`, on 127.0.0.1).
    public init(parsing text: String) throws(ServerError) {
        var host = "127.0.0.1", portText = text
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { throw .invalidAddress(text) }
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = String(text[text.index(close, offsetBy: 2)...])
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = String(text[text.index(after: colon)...])
            if host.contains(":") { throw .invalidAddress(text) }
        }
        if host == "localhost" { host = "127.0.0.1" }
        guard let port = UInt16(portText), !host.isEmpty, Self.isNumeric(host) else { throw .invalidAddress(text) }
        self.init(host: host, port: port)
    }

    private static func isNumeric(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// True for 127.0.0.0/8 and ::1: only this machine can connect.
    public var isLoopback: Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        return host == "::1"
    }

    /// `127.0.0.1:8080`, `[::1]:8080`.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A small, strict HTTP/1.1 server on POSIX sockets: one thread accepts, each connection has a thread of
/// its own (bounded by `HTTPLimits.maxConnections`), reads one request (bounded in size, and in time:
/// `408 Request Timeout` when it is not whole within `HTTPLimits.readTimeout`), answers it and closes
/// (`Connection: close`). Streaming responses (server-sent events, MJPEG) write from that thread with a
/// send timeout, so a client that stops reading is closed and never holds anything else up, and watch
/// the socket while they wait, so a client that closes gives its stream's place back at once.
///
/// The handler runs as a Swift task whose jobs the connection's own thread runs (a task executor
/// preference): whatever a handler does that blocks (opening a file, listing a folder) holds that
/// thread, never one of the Swift pool's few. Code isolated to an actor with an executor of its own
/// (the main actor) still runs on that executor, and tasks a handler starts with `Task {}` on the pool.
public final class HTTPServer: Sendable {
    /// Answers one request; runs as a Swift task, on the connection's own thread, while that thread waits
    /// for the response.
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

    private let requested: ListenAddress
    private let limits: HTTPLimits
    private let handler: Handler
    private let state = Locked(State())
    private let acceptEnded = DispatchSemaphore(value: 0)

    private struct State {
        var listener: Int32 = -1
        var port: UInt16 = 0
        var started = false
        var stopping = false
        /// Open connections, by descriptor, and whether each streams.
        var connections: [Int32: Bool] = [:]
        var refused = 0
        /// Who waits for streams to end (`waitForStreams`): at most how many may stay open.
        var streamWaiters: [Int: (atMost: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextWaiter = 0
        var streams: Int { connections.values.filter { $0 }.count }
    }

    /// A server that is not listening yet; `start()` opens the socket.
    /// - Parameters:
    ///   - address: Where to listen (port 0: a free one, read back from `address` after `start()`).
    ///   - limits: What the server accepts and keeps (`HTTPLimits()` by default).
    ///   - handler: Answers each request.
    public init(listening address: ListenAddress, limits: HTTPLimits = HTTPLimits(), handler: @escaping Handler) {
        self.requested = address
        self.limits = limits
        self.handler = handler
    }

    /// The address it listens on, with the port it was given (after `start()`).
    public var address: ListenAddress { ListenAddress(host: requested.host, port: state.withLock { $0.port }) }

    /// Connections open now.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Streaming responses open now.
    public var streamCount: Int { state.withLock { $0.streams } }

    /// Waits until at most `count` streaming responses are open (a stream's place is given back when its
    /// connection has ended), or `timeout` passes; true when they are.
    func waitForStreams(atMost count: Int, timeout: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLock { state -> Int? in
                guard state.streams > count else { return nil }
                state.nextWaiter += 1
                state.streamWaiters[state.nextWaiter] = (count, continuation)
                return state.nextWaiter
            }
            guard let id else { return continuation.resume(returning: true) }
            Task {
                try? await Task.sleep(for: timeout)
                state.withLock { $0.streamWaiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
            }
        }
    }

    private func streamEnded() {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            let streams = state.streams
            let ids = state.streamWaiters.filter { streams <= $0.value.atMost }.map(\.key)
            return ids.compactMap { state.streamWaiters.removeValue(forKey: $0)?.continuation }
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Binds, listens and starts accepting. Returns the port (the free one picked for port 0).
    @discardableResult
    public func start() throws(ServerError) -> UInt16 {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(requested.host, String(requested.port), &hints, &found) == 0, let info = found else {
            throw .invalidAddress(requested.description)
        }
        defer { freeaddrinfo(found) }
        let descriptor = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .listenFailed(address: requested.description, reason: String(cString: strerror(errno))) }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if info.pointee.ai_family == AF_INET6 { setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        guard bind(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0, listen(descriptor, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw .listenFailed(address: requested.description, reason: reason)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let port = withUnsafeMutablePointer(to: &storage) { pointer -> UInt16 in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
            if Int32(pointer.pointee.ss_family) == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
        }
        state.withLock {
            $0.listener = descriptor
            $0.port = port
            $0.started = true
        }
        let thread = Thread { [self] in acceptLoop(descriptor) }
        thread.name = "capture.http-accept"
        thread.start()
        return port
    }

    /// Stops accepting, closes every connection (streams end at their next write) and waits, bounded,
    /// for the connections' threads to finish. Safe to call more than once.
    public func stop() {
        let (started, connections) = state.withLock { state -> (Bool, [Int32]) in
            let first = state.started && !state.stopping
            state.stopping = true
            return (first, Array(state.connections.keys))
        }
        guard started else { return }
        for descriptor in connections { shutdown(descriptor, Int32(SHUT_RDWR)) }
        _ = acceptEnded.wait(timeout: .now() + 2)
        for _ in 0..<50 where connectionCount > 0 { usleep(20_000) }
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    private func acceptLoop(_ listener: Int32) {
        defer {
            close(listener)
            acceptEnded.signal()
        }
        while !isStopping {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let admitted = state.withLock { state -> Bool in
                guard !state.stopping, state.connections.count < limits.maxConnections else {
                    state.refused += 1
                    return false
                }
                state.connections[client] = false
                return true
            }
            configure(client)
            guard admitted else {
                let connection = Connection(descriptor: client, server: self)
                _ = connection.send(
                    Self.head(.unavailable, headers: [("Content-Type", "text/plain; charset=utf-8")], length: 31)
                        + Array("too many connections; try again".utf8))
                close(client)
                continue
            }
            let thread = Thread { [self] in serve(client) }
            thread.name = "capture.http-connection"
            thread.start()
        }
    }

    private func configure(_ descriptor: Int32) {
        func timeval(_ duration: Duration) -> timeval {
            let (seconds, attoseconds) = duration.components
            return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        }
        var read = timeval(limits.readTimeout), write = timeval(limits.writeTimeout)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &read, socklen_t(MemoryLayout<Glibc.timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &write, socklen_t(MemoryLayout<Glibc.timeval>.size))
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    private func serve(_ descriptor: Int32) {
        let connection = Connection(descriptor: descriptor, server: self)
        defer {
            let streamed = state.withLock { $0.connections.removeValue(forKey: descriptor) } == true
            shutdown(descriptor, Int32(SHUT_RDWR))
            close(descriptor)
            if streamed { streamEnded() }
        }
        guard let request = readRequest(connection) else { return }
        let response = respond(to: request)
        switch response.body {
        case .bytes, .file:
            _ = connection.send(Self.encode(response))
            if case .file(let file, let length) = response.body {
                _ = connection.sendFile(file, length: length)
                close(file)
            }
        case .stream(let produce):
            let admitted = state.withLock { state -> Bool in
                guard state.connections.values.filter({ $0 }).count < limits.maxStreams else { return false }
                state.connections[descriptor] = true
                return true
            }
            guard admitted else {
                _ = connection.send(
                    Self.encode(HTTPResponse.error(.unavailable, "too-many-streams", "\(limits.maxStreams) streams are open; close one and try again")))
                return
            }
            var size = Int32(clamping: limits.streamSendBuffer)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            guard connection.send(Self.head(response.status, headers: response.headers, length: nil)) else { return }
            produce(connection)
        }
    }

    /// Reads one request: nil when it was refused (and answered), did not come whole within the read
    /// timeout (answered `408 Request Timeout`), or the client closed or the server stops (no answer).
    private func readRequest(_ connection: Connection) -> HTTPRequest? {
        var reader = RequestReader(limits: limits)
        var chunk = [UInt8](repeating: 0, count: 8192)
        let deadline = ContinuousClock.now + limits.readTimeout
        // Bounded by the deadline, and by the reader, which refuses what grows past the limits.
        while !isStopping {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else {
                let message = "the request did not arrive whole within \(limits.readTimeout)"
                _ = connection.send(Self.encode(HTTPResponse.error(.requestTimeout, "request-timeout", message)))
                return nil
            }
            var readable = pollfd(fd: connection.descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&readable, 1, left.pollMilliseconds)
            if ready < 0 && errno != EINTR { return nil }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) { continue }
            guard count > 0 else { return nil }  // closed or reset
            switch reader.append(chunk[..<count]) {
            case .complete(let request, _):
                return request
            case .refused(let status, let reason):
                _ = connection.send(Self.encode(HTTPResponse.error(status, "bad-request", reason)))
                return nil
            case .needMore:
                continue
            }
        }
        return nil
    }

    /// Runs the handler as a task whose jobs this thread (the connection's own) runs, until its answer.
    private func respond(to request: HTTPRequest) -> HTTPResponse {
        let answer = Locked<HTTPResponse?>(nil)
        let executor = ThreadTaskExecutor()
        let handler = self.handler
        Task(executorPreference: executor) {
            answer.value = await handler(request)
            executor.finish()
        }
        executor.run()
        return answer.value ?? HTTPResponse.error(.internalError, "internal-error", "no answer")
    }

    static let standardHeaders: [(String, String)] = [
        ("Connection", "close"), ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
    ]

    /// The status line and headers; `length` nil for a streamed body.
    static func head(_ status: HTTPStatus, headers: [(name: String, value: String)], length: Int64?) -> [UInt8] {
        var text = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        for (name, value) in headers where !name.contains("\r") && !name.contains("\n") && !value.contains("\r") && !value.contains("\n") {
            text += "\(name): \(value)\r\n"
        }
        if let length { text += "Content-Length: \(length)\r\n" }
        for (name, value) in standardHeaders where !headers.contains(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) {
            text += "\(name): \(value)\r\n"
        }
        return Array((text + "\r\n").utf8)
    }

    /// A whole response with an in-memory body (a file's head only: its bytes follow).
    static func encode(_ response: HTTPResponse) -> [UInt8] {
        switch response.body {
        case .bytes(let bytes): head(response.status, headers: response.headers, length: Int64(bytes.count)) + bytes
        case .file(_, let length): head(response.status, headers: response.headers, length: length)
        case .stream: head(response.status, headers: response.headers, length: nil)
        }
    }
}

/// One client's socket, as a streaming response writes to it.
final class Connection: ResponseStream, @unchecked Sendable {
    // @unchecked: `descriptor` is immutable; `failed` is behind `Locked`; the server is Sendable.
    let descriptor: Int32
    private let server: HTTPServer
    private let failed = Locked(false)

    init(descriptor: Int32, server: HTTPServer) {
        self.descriptor = descriptor
        self.server = server
    }

    var isClosed: Bool { failed.value || server.isStopping }

    /// Waits on the queue and on the socket: the client closing or resetting its connection ends the wait
    /// and marks the stream failed.
    func take<Item: Sendable>(from queue: ClientQueue<Item>, waiting timeout: Duration) -> [Item] {
        guard !isClosed else { return [] }
        let (items, hungUp) = queue.take(waiting: timeout, watching: descriptor)
        if hungUp { failed.value = true }
        return items
    }

    func write(_ bytes: [UInt8]) -> Bool { !server.isStopping && send(bytes) }

    /// Sends everything or fails (the client closed, reset, or did not read within the send timeout).
    func send(_ bytes: [UInt8]) -> Bool {
        guard !failed.value else { return false }
        var offset = 0
        while offset < bytes.count {
            // baseAddress! cannot fail: the array is not empty (offset < count).
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else {
                failed.value = true
                return false
            }
            offset += sent
        }
        return true
    }

    func sendFile(_ file: Int32, length: Int64) -> Bool {
        var remaining = length
        var offset: off_t = 0
        while remaining > 0 {
            let sent = sendfile(descriptor, file, &offset, Int(min(remaining, 1 << 20)))
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else {
                failed.value = true
                return false
            }
            remaining -= Int64(sent)
        }
        return true
    }
}

extension Duration {
    /// The timeout `poll` takes: milliseconds, rounded up (at least one, at most `Int32.max`).
    var pollMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        return Int32(clamping: max(1, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000))
    }
}
