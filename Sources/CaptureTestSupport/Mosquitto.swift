import Foundation

/// A Mosquitto broker for tests: Debian's `mosquitto` on 127.0.0.1 only, on the given port, with its
/// configuration and persistence in `directory` (so a persistent subscriber's session survives a
/// restart). Started and stopped by the test, as the user that runs the test (started by root,
/// mosquitto would otherwise become the `mosquitto` user, which cannot write the test's folder: its
/// persistence failed there, silently).
public final class MosquittoBroker: @unchecked Sendable {
    // @unchecked: used by one test at a time; `process` is replaced only by start/stop.
    public let port: Int
    public let directory: String
    private var process: ChildProcess?

    public init(port: Int, directory: String) throws {
        self.port = port
        self.directory = directory
        // max_queued_messages 0: no limit on what the broker holds for a client that reads slowly. A
        // test's subscriber reads every event of a session, and the fuzz adds outputs that post one
        // per frame; beside a busy loop it fell more than the default 1,000 messages behind, and the
        // broker dropped one of the replies it was waiting for (a gap in `seq`, every later reply
        // there). What the broker does with a slow client is its policy, not the publisher's.
        let configuration = """
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence true
            persistence_location \(directory)/
            autosave_interval 1
            max_queued_messages 0
            user \(getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } ?? "root")

            """
        try configuration.write(toFile: "\(directory)/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    /// Starts the broker and waits (bounded) until it accepts connections.
    public func start() throws {
        process = try ChildProcess(["mosquitto", "-c", "\(directory)/mosquitto.conf"], discardOutput: true)
        for _ in 0..<100 where !isListening(port) { usleep(50_000) }
    }

    /// Stops the broker with `signal` (SIGTERM: it saves its sessions; SIGKILL: it just goes).
    public func stop(_ signal: Int32 = SIGTERM) {
        process?.signal(signal)
        _ = process?.wait()
        process = nil
    }

    deinit { stop(SIGKILL) }

    /// `mosquitto_sub -v` on `topic` (QoS 1); with `clientID`, a persistent session (`-c`) that
    /// collects what is published while it is away. Its lines are "TOPIC PAYLOAD".
    public func subscribe(_ topic: String, clientID: String? = nil) throws -> (ChildProcess, OutputCollector) {
        var arguments = ["mosquitto_sub", "-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-v", "-q", "1"]
        if let clientID { arguments += ["-c", "-i", clientID] }
        let child = try ChildProcess(arguments)
        return (child, child.collectOutput())
    }

    /// `mosquitto_pub` of one message (QoS 1); true when it was accepted.
    @discardableResult
    public func publish(_ topic: String, _ message: String, retain: Bool = false) throws -> Bool {
        let child = try ChildProcess(["mosquitto_pub", "-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-m", message, "-q", "1"] + (retain ? ["-r"] : []))
        return child.finish().status == 0
    }
}

/// A port of 127.0.0.1 free now (the kernel's choice for a socket bound to port 0).
public func freeLoopbackPort(udp: Bool = false) -> Int {
    let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// 127.0.0.1:`port` for a socket call.
private func withLoopback<R>(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

/// True when a socket of another program is bound to UDP port `port` of 127.0.0.1 (binding it fails).
public func isUDPPortTaken(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    return withLoopback(port: port) { bind(fd, $0, $1) } != 0
}

/// True when something accepts TCP connections on 127.0.0.1:`port`.
public func isListening(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    return withLoopback(port: port) { connect(fd, $0, $1) } == 0
}
