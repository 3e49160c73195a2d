import CMosquitto
import Capture
import Foundation

/// libmosquitto's process-wide set-up, once.
private let mosquittoLibrary: Bool = {
    mosquitto_lib_init()
    return true
}()

/// What the connection tells its owner (on its own thread; must not block).
public enum MQTTStatus: Sendable, Equatable {
    /// Connected to the broker (again): `online` is published, commands are read.
    case connected(broker: String)
    /// Not connected: the broker is not there, went away or refused; another try comes in `retryIn` seconds.
    case disconnected(broker: String, reason: String, retryIn: Double)
}

/// One MQTT client on a thread of its own (libmosquitto driven by `mosquitto_loop`, every libmosquitto
/// call made on that thread): messages wait in a bounded queue while the broker is away; the broker is
/// retried with a back-off (1 s doubling to 30 s); a retained `online` is published on every connect,
/// and `offline` is the last will (and is published on a graceful stop).
///
/// SIGPIPE: libmosquitto writes its socket with write(2) (and OpenSSL with its own writes), which raise
/// SIGPIPE when the broker has gone. The thread blocks SIGPIPE in its signal mask before its first
/// socket call: a thread-directed SIGPIPE then stays pending on that thread (consumed after each
/// loop) and the write fails with EPIPE, which libmosquitto takes as a lost connection.
final class MQTTConnection: @unchecked Sendable {
    // @unchecked: the libmosquitto handle is touched on `thread` only; everything else is `Locked`
    // or immutable.
    struct Outgoing: Sendable {
        var topic: String
        var payload: [UInt8]
        var retain: Bool
    }

    private struct Shared: Sendable {
        var queue: [Outgoing] = []
        var head = 0
        var dropped = 0
        var droppedReported = 0
        var delivered = 0
        var connected = false
        var stopping = false
        var stopDeadline: ContinuousClock.Instant?
        var finished = false
        var inFlight: Set<Int32> = []
        var offlineMid: Int32?
        var offlineAcknowledged = false
        var queued: Int { queue.count - head }
    }

    let url: MQTTURL
    let options: MQTTOptions
    private let password: String?
    private let clientID: String
    private let shared = Locked(Shared())
    private let onStatus: @Sendable (MQTTStatus) -> Void
    /// A command's payload: its first `MQTTCommand.maximumBytes + 1` bytes at most, and its whole length.
    private let onCommand: @Sendable (_ head: [UInt8], _ length: Int) -> Void
    /// Messages handed to libmosquitto and not acknowledged yet, at most.
    static let maximumInFlight = 100

    init(
        url: MQTTURL, options: MQTTOptions, onStatus: @escaping @Sendable (MQTTStatus) -> Void,
        onCommand: @escaping @Sendable (_ head: [UInt8], _ length: Int) -> Void
    ) throws(CaptureError) {
        let resolved = try options.resolved(for: url)
        self.url = url
        self.options = options
        password = resolved.password
        clientID = resolved.clientID
        self.onStatus = onStatus
        self.onCommand = onCommand
        _ = mosquittoLibrary
    }

    var isConnected: Bool { shared.withLock { $0.connected } }
    /// Messages the broker acknowledged (QoS 1).
    var deliveredCount: Int { shared.withLock { $0.delivered } }
    /// Messages dropped because the queue was full while the broker was away.
    var droppedCount: Int { shared.withLock { $0.dropped } }
    /// Messages waiting for the broker.
    var queuedCount: Int { shared.withLock { $0.queued } }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "capture-mqtt"
        thread.start()
    }

    /// Queues a message; when the queue is full the oldest goes (counted).
    func send(_ message: Outgoing) {
        shared.withLock { shared in
            guard !shared.finished else { return }
            if shared.queued >= options.queueLimit {
                shared.head += 1
                shared.dropped += 1
            }
            shared.queue.append(message)
        }
    }

    /// Sends what is queued (waiting at most `timeout` for the broker), publishes `offline`,
    /// disconnects and ends the thread. Returns when the thread has ended (bounded).
    func stop(timeout: Duration) async {
        shared.withLock { shared in
            shared.stopping = true
            shared.stopDeadline = .now + timeout
        }
        let limit = ContinuousClock.now + timeout + .seconds(5)
        while !shared.withLock({ $0.finished }) && ContinuousClock.now < limit {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    // MARK: The thread

    private func run() {
        var pipe = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipe, nil)
        defer { shared.withLock { $0.finished = true } }

        let context = Unmanaged.passRetained(CallbackBox(self))
        defer { context.release() }
        guard let mosq = mosquitto_new(clientID, true, context.toOpaque()) else {
            onStatus(.disconnected(broker: url.broker, reason: "libmosquitto could not make a client", retryIn: 0))
            return
        }
        defer { mosquitto_destroy(mosq) }
        configure(mosq)

        var backoff = 1.0
        var attemptAt = ContinuousClock.now
        var hasSocket = false
        var everTried = false
        func scheduleRetry(_ reason: String) {
            hasSocket = false
            shared.withLock { $0.connected = false }
            let stopping = shared.withLock { $0.stopping }
            if !stopping { onStatus(.disconnected(broker: url.broker, reason: reason, retryIn: backoff)) }
            attemptAt = .now + .milliseconds(Int(backoff * 1000))
            backoff = min(30, backoff * 2)
        }
        while true {
            let (stopping, deadline, connected, idle) = shared.withLock { ($0.stopping, $0.stopDeadline, $0.connected, $0.queued == 0 && $0.inFlight.isEmpty) }
            if stopping && (!connected || idle || ContinuousClock.now >= (deadline ?? .now)) { break }
            if !hasSocket && !stopping && ContinuousClock.now >= attemptAt {
                let rc = everTried ? mosquitto_reconnect_async(mosq) : mosquitto_connect_async(mosq, url.host, Int32(url.port), Int32(options.keepAlive))
                everTried = true
                if rc == MOSQ_ERR_SUCCESS.rawValue {
                    hasSocket = true
                } else {
                    scheduleRetry(Self.describe(rc))
                }
            }
            if connected { pump(mosq) }
            let rc = hasSocket ? mosquitto_loop(mosq, 50, 1) : MOSQ_ERR_NO_CONN.rawValue
            consumePendingSIGPIPE()
            if rc != MOSQ_ERR_SUCCESS.rawValue {
                if hasSocket {
                    scheduleRetry(Self.describe(rc))
                } else {
                    usleep(50_000)
                }
            }
        }
        // A graceful end: `offline` (retained) replaces `online`, then DISCONNECT (no last will).
        if shared.withLock({ $0.connected }) {
            var mid: Int32 = 0
            let offline = Array("offline".utf8)
            if mosquitto_publish(mosq, &mid, url.topic("available"), Int32(offline.count), offline, 1, true) == MOSQ_ERR_SUCCESS.rawValue {
                shared.withLock { $0.offlineMid = mid }
                let limit = ContinuousClock.now + .seconds(2)
                while ContinuousClock.now < limit && !shared.withLock({ $0.offlineAcknowledged }) {
                    if mosquitto_loop(mosq, 50, 1) != MOSQ_ERR_SUCCESS.rawValue { break }
                }
            }
            mosquitto_disconnect(mosq)
            _ = mosquitto_loop(mosq, 50, 1)
            consumePendingSIGPIPE()
        }
        shared.withLock { $0.connected = false }
    }

    private func configure(_ mosq: OpaquePointer) {
        _ = mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        let offline = Array("offline".utf8)
        _ = mosquitto_will_set(mosq, url.topic("available"), Int32(offline.count), offline, 1, true)
        if let user = options.user { _ = mosquitto_username_pw_set(mosq, user, password) }
        if options.usesTLS(url) {
            // mqtts:// without a CA of its own trusts the system's (as mosquitto_pub --tls-use-os-certs).
            let caPath = options.caPath ?? (options.caFile == nil ? "/etc/ssl/certs" : nil)
            _ = mosquitto_tls_set(mosq, options.caFile, caPath, options.certFile, options.keyFile, nil)
            if options.insecure { _ = mosquitto_tls_insecure_set(mosq, true) }
        }
        _ = mosquitto_max_inflight_messages_set(mosq, UInt32(Self.maximumInFlight))
        mosquitto_connect_callback_set(mosq, connectTrampoline)
        mosquitto_disconnect_callback_set(mosq, disconnectTrampoline)
        mosquitto_publish_callback_set(mosq, publishTrampoline)
        mosquitto_message_callback_set(mosq, messageTrampoline)
    }

    /// Hands queued messages to libmosquitto while fewer than `maximumInFlight` wait for their ack.
    private func pump(_ mosq: OpaquePointer) {
        // A count of what the queue dropped while the broker was away goes first.
        let dropped: Int? = shared.withLock { shared in
            guard shared.dropped > shared.droppedReported else { return nil }
            shared.droppedReported = shared.dropped
            return shared.dropped
        }
        if let dropped {
            let payload = Array("{\"event\": \"events-dropped\", \"count\": \(dropped)}".utf8)
            var mid: Int32 = 0
            _ = mosquitto_publish(mosq, &mid, url.topic("events-dropped"), Int32(payload.count), payload, 1, false)
        }
        while true {
            let next: Outgoing? = shared.withLock { shared in
                guard shared.inFlight.count < Self.maximumInFlight, shared.queued > 0 else { return nil }
                let message = shared.queue[shared.head]
                shared.head += 1
                if shared.head > 1024 && shared.head * 2 > shared.queue.count {
                    shared.queue.removeFirst(shared.head)
                    shared.head = 0
                }
                return message
            }
            guard let next else { return }
            var mid: Int32 = 0
            let rc = next.payload.withUnsafeBytes { bytes in
                mosquitto_publish(mosq, &mid, next.topic, Int32(bytes.count), bytes.baseAddress, 1, next.retain)
            }
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                shared.withLock { _ = $0.inFlight.insert(mid) }
            } else {
                // Not taken (the connection just went): back to the front, in order.
                shared.withLock { shared in
                    if shared.head > 0 {
                        shared.head -= 1
                        shared.queue[shared.head] = next
                    } else {
                        shared.queue.insert(next, at: 0)
                    }
                }
                return
            }
        }
    }

    private func consumePendingSIGPIPE() {
        var pending = sigset_t()
        sigpending(&pending)
        guard sigismember(&pending, SIGPIPE) == 1 else { return }
        var pipe = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        var zero = timespec(tv_sec: 0, tv_nsec: 0)
        _ = sigtimedwait(&pipe, nil, &zero)
    }

    static func describe(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(rc))
    }

    // MARK: Callbacks (on the thread, inside mosquitto_loop)

    fileprivate func connected(_ mosq: OpaquePointer, code: Int32) {
        guard code == 0 else {
            onStatus(.disconnected(broker: url.broker, reason: "the broker refused: \(String(cString: mosquitto_connack_string(code)))", retryIn: 1))
            return
        }
        shared.withLock { shared in
            shared.connected = true
            // What libmosquitto had in flight is sent again by it; count only what it acknowledges anew.
            shared.inFlight.removeAll()
        }
        var mid: Int32 = 0
        _ = mosquitto_subscribe(mosq, &mid, url.topic("command"), 1)
        let online = Array("online".utf8)
        _ = mosquitto_publish(mosq, &mid, url.topic("available"), Int32(online.count), online, 1, true)
        onStatus(.connected(broker: url.broker))
    }

    fileprivate func disconnected() {
        shared.withLock { $0.connected = false }
    }

    fileprivate func published(mid: Int32) {
        shared.withLock { shared in
            if shared.inFlight.remove(mid) != nil { shared.delivered += 1 }
            if mid == shared.offlineMid { shared.offlineAcknowledged = true }
        }
    }

    fileprivate func received(_ message: UnsafePointer<mosquitto_message>) {
        let message = message.pointee
        guard let topic = message.topic, String(cString: topic) == url.topic("command") else { return }
        // A retained command would run again at every connect: never taken.
        guard !message.retain else { return }
        // Only what a command can be is copied: a flood of large payloads costs nothing more.
        let length = Int(max(0, message.payloadlen))
        let head = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: min(length, MQTTCommand.maximumBytes + 1))) } ?? []
        onCommand(head, length)
    }
}

/// The callbacks' context: the connection, unretained by libmosquitto (the thread holds it).
private final class CallbackBox {
    unowned let connection: MQTTConnection
    init(_ connection: MQTTConnection) { self.connection = connection }
}

private func box(_ context: UnsafeMutableRawPointer?) -> MQTTConnection? {
    context.map { Unmanaged<CallbackBox>.fromOpaque($0).takeUnretainedValue().connection }
}

private let connectTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = { mosq, context, code in
    guard let mosq else { return }
    box(context)?.connected(mosq, code: code)
}

private let disconnectTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = { _, context, _ in
    box(context)?.disconnected()
}

private let publishTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = { _, context, mid in
    box(context)?.published(mid: mid)
}

private let messageTrampoline: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?) -> Void = { _, context, message in
    guard let message else { return }
    box(context)?.received(message)
}
