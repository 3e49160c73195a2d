import Capture
import Foundation
import PipelineFile

/// Events and commands of a session over MQTT, in the topic layout Frigate's users know:
///
/// - `PREFIX/EVENT`: every event as the JSON line `capture run --json` prints
///   (`PREFIX/photo-saved` ← `{"event": "photo-saved", "time": 1.250, "output": "photo", ...}`), QoS 1,
///   in the order the events happened;
/// - `PREFIX/available`: `online` (retained) while connected, `offline` (retained) after a graceful
///   stop and as the last will when the process dies or loses the broker;
/// - `PREFIX/command`: a `.pipeline` action statement (`capture-photo`, `start-recording, output=movie`,
///   `set-preset, preset=hd1280x720`, `configure-device, input=camera, exposure-mode=locked` ...), read by
///   the `.pipeline` checker against the running document and performed beside the scenario
///   (`ScenarioRunner.interact(_:)`); retained commands are ignored;
/// - `PREFIX/reply`: one answer per command, in order: `{"command": TEXT, "ok": true}` or
///   `{"command": TEXT, "ok": false, "error": NAME, "message": TEXT}`;
/// - `PREFIX/events-dropped`: `{"event": "events-dropped", "count": N}` after a reconnect when the
///   queue (`MQTTOptions.queueLimit`) overflowed while the broker was away.
///
/// A broker that is down at the start or goes away never stops the session: the client retries with
/// a back-off (1 s doubling to 30 s) and keeps events in its bounded queue meanwhile.
public final class MQTTEventPublisher: Sendable {
    public let url: MQTTURL
    private let connection: MQTTConnection
    private let commands: AsyncStream<String?>
    private let commandInput: AsyncStream<String?>.Continuation
    private let tasks = Locked<[Task<Void, Never>]>([])
    private let started = Locked(false)

    /// Most commands waiting to be performed; more are answered `busy`.
    public static let commandBacklog = 32

    /// A publisher for `url` (`mqtt[s]://HOST[:PORT]/PREFIX`). `onStatus` hears of each connection and
    /// loss (on the client's thread: it must not block). Typed errors: `invalidMqttUrl`,
    /// `invalidMqttOptions`.
    public convenience init(
        url: String, options: MQTTOptions = MQTTOptions(),
        onStatus: @escaping @Sendable (MQTTStatus) -> Void = { _ in }
    ) throws(CaptureError) {
        try self.init(url: try MQTTURL(url), options: options, onStatus: onStatus)
    }

    public init(
        url: MQTTURL, options: MQTTOptions = MQTTOptions(),
        onStatus: @escaping @Sendable (MQTTStatus) -> Void = { _ in }
    ) throws(CaptureError) {
        self.url = url
        let (stream, continuation) = AsyncStream<String?>.makeStream(bufferingPolicy: .bufferingOldest(Self.commandBacklog))
        commands = stream
        commandInput = continuation
        let busy = Locked<MQTTConnection?>(nil)
        connection = try MQTTConnection(url: url, options: options, onStatus: onStatus) { text in
            if case .dropped = continuation.yield(text) {
                busy.value?.send(Self.reply(to: text ?? "", url: url, error: ("busy", "more than \(Self.commandBacklog) commands are waiting; try again")))
            }
        }
        busy.value = connection
    }

    /// Connects (in the background; the first connection may come later, or never).
    public func start() {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        if first { connection.start() }
    }

    /// True while connected to the broker.
    public var isConnected: Bool { connection.isConnected }
    /// Messages the broker has acknowledged so far (events, replies, `online`).
    public var deliveredCount: Int { connection.deliveredCount }
    /// Events dropped because the queue was full while the broker was away.
    public var droppedCount: Int { connection.droppedCount }
    /// Messages waiting for the broker.
    public var queuedCount: Int { connection.queuedCount }

    // MARK: Events

    /// Publishes an event of a run on `PREFIX/NAME`, as `capture run --json` prints it.
    public func publish(_ event: RunnerEvent) {
        publish(name: event.name, json: event.jsonLine)
    }

    /// Publishes a session event, timed from `start`.
    public func publish(_ event: SessionEvent, since start: ContinuousClock.Instant) {
        publish(name: event.name, json: EventFormat.json(event, since: start))
    }

    func publish(name: String, json: String) {
        connection.send(.init(topic: url.topic(name), payload: Array(json.utf8), retain: false))
    }

    /// Publishes every event of `session` from now on, timed from now, until `stop()`.
    public func publishEvents(of session: CaptureSession) {
        let start = ContinuousClock.now
        let stream = session.events()
        let task = Task { [self] in
            for await event in stream { publish(event, since: start) }
        }
        tasks.withLock { $0.append(task) }
    }

    // MARK: Commands

    /// Performs each command with `runner`: the text is read as one `.pipeline` action of the runner's
    /// document (never as anything else), performed with `ScenarioRunner.interact(_:)`, and answered
    /// on `PREFIX/reply`. One command at a time, in the order they came.
    public func performCommands(with runner: ScenarioRunner) {
        performCommands { text async -> MQTTReply in
            let action: Action
            do throws(PipelineDiagnostics) {
                action = try runner.document.action(parsing: text)
            } catch {
                return .failure(name: "invalid-command", message: error.diagnostics.map { $0.message }.joined(separator: "; "))
            }
            if let failure = await runner.interact(action) { return .failure(name: failure.errorName, message: failure.message) }
            return .success
        }
    }

    /// Answers each command with `handler`, one at a time, in order.
    public func performCommands(_ handler: @escaping @Sendable (String) async -> MQTTReply) {
        let commands = commands
        let connection = connection
        let url = url
        let task = Task {
            for await text in commands {
                guard let text else {
                    connection.send(Self.reply(to: "", url: url, error: ("invalid-command", "the command is not UTF-8 text")))
                    continue
                }
                switch await handler(text) {
                case .success: connection.send(Self.reply(to: text, url: url, error: nil))
                case .failure(let name, let message): connection.send(Self.reply(to: text, url: url, error: (name, message)))
                }
            }
        }
        tasks.withLock { $0.append(task) }
    }

    static func reply(to command: String, url: MQTTURL, error: (name: String, message: String)?) -> MQTTConnection.Outgoing {
        var fields: [(String, EventValue)] = [("ok", .bool(error == nil))]
        if let error { fields += [("error", .string(error.name)), ("message", .string(error.message))] }
        let json =
            "{" + ([("command", EventValue.string(command))] + fields).map { "\(EventValue.string($0.0).json): \($0.1.json)" }.joined(separator: ", ") + "}"
        return .init(topic: url.topic("reply"), payload: Array(json.utf8), retain: false)
    }

    // MARK: Stopping

    /// Stops reading commands, sends what is queued (waiting at most `timeout` for the broker),
    /// publishes `offline` and disconnects.
    public func stop(timeout: Duration = .seconds(5)) async {
        commandInput.finish()
        let running = tasks.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        for task in running { task.cancel() }
        if started.value { await connection.stop(timeout: timeout) }
    }
}

/// The answer to a command.
public enum MQTTReply: Sendable, Equatable {
    case success
    /// `name`: a stable kebab-case error name (`CaptureError.name`, `invalid-command`, `busy` ...).
    case failure(name: String, message: String)
}
