import Capture
import CaptureControl
import Foundation

/// Events and commands of a session over MQTT, in the topic layout Frigate's users know:
///
/// - `PREFIX/EVENT`: every event as the JSON line `capture run --json` prints
///   (`PREFIX/photo-saved` ← `{"event": "photo-saved", "time": 1.250, "output": "photo", ...}`), QoS 1,
///   in the order the events happened;
/// - `PREFIX/available`: `online` (retained) while connected, `offline` (retained) after a graceful
///   stop and as the last will when the process dies or loses the broker;
/// - `PREFIX/command`: a `.pipeline` action statement (`capture-photo`, `start-recording, output=movie`,
///   `set-preset, preset=hd1280x720` ...), or `{"id": "ID", "command": "STATEMENT"}` to have the
///   reply carry the caller's id. It is read by the `.pipeline` checker against the session as it
///   is now and performed by the session's `SessionController` as a remote caller (confined to the
///   output folder: `RemoteAccess`); retained commands are ignored;
/// - `PREFIX/reply`: one answer per command, in the order the commands arrived (`MQTTCommandReply`):
///   `{"seq": N, "id": ID, "command": TEXT, "ok": true, ...}` or `..., "ok": false, "error": NAME,
///   "message": TEXT}`; `seq` counts the commands from 1, TEXT is the command's first 200 bytes;
/// - `PREFIX/events-dropped`: `{"event": "events-dropped", "count": N}` after a reconnect when the
///   queue (`MQTTOptions.queueLimit`) overflowed while the broker was away.
///
/// A broker that is down at the start or goes away never stops the session: the client retries with
/// a back-off (1 s doubling to 30 s) and keeps events in its bounded queue meanwhile.

public final class MQTTEventPublisher: Sendable {
    public let url: MQTTURL
    private let connection: MQTTConnection
    let queue: MQTTCommandQueue
    private let tasks = Locked<[Task<Void, Never>]>([])
    private let started = Locked(false)

    /// Most commands waiting to be performed; more are answered `busy` (in their turn).
    public static let commandBacklog = 32
    /// Most `busy` answers waiting for their turn; commands beyond them get no answer (a flood), and
    /// are counted in `unansweredCount`.
    public static let refusalBacklog = 1024

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
        let queue = MQTTCommandQueue(commandLimit: Self.commandBacklog, refusalLimit: Self.refusalBacklog)
        self.queue = queue
        connection = try MQTTConnection(url: url, options: options, onStatus: onStatus) { head, length in
            queue.arrived(MQTTCommand(head: head, length: length))
        }
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
    /// Commands that got no answer because more than `refusalBacklog` answers were waiting.
    public var unansweredCount: Int { queue.unansweredCount }

    // MARK: Events

    /// Publishes a session event, timed from `start`.
    public func publish(_ event: SessionEvent, since start: ContinuousClock.Instant) {
        publish(name: event.name, json: EventFormat.json(event, since: start))
    }

    /// Publishes an event's JSON line (`EventFormat`) on `PREFIX/NAME`: what a run prints with `--json`.
    public func publish(name: String, json: String) {
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

    /// Performs each command as a remote caller: `reader` makes the text one command against the
    /// session of `controller()` as it is now (nil: not set up yet, answered `not-running`), the
    /// controller performs it (`SessionController.perform(_:as: .remote)`), and the answer goes to
    /// `PREFIX/reply` with what it made, files named in the output folder. One command at a time, in
    /// the order they came. The syntax is the reader's; this client knows none.
    public func performCommands(reading reader: ControlCommandReader, with controller: @escaping @Sendable () -> SessionController?) {
        performCommands { text async -> MQTTReply in
            guard let controller = controller() else { return .failure(name: "not-running", message: "the session is not set up yet") }
            do throws(ControlCommandReader.Failure) {
                let command = try reader.command(from: text, for: controller, as: .remote)
                do throws(CaptureError) {
                    return .success(MQTTReply.fields(of: try await controller.perform(command, as: .remote), in: controller.folders))
                } catch {
                    return .failure(name: error.name, message: error.description)
                }
            } catch {
                return .failure(name: error.name, message: error.message)
            }
        }
    }

    /// Answers each command with `handler`, one at a time, in order.
    public func performCommands(_ handler: @escaping @Sendable (String) async -> MQTTReply) {
        let queue = queue
        let connection = connection
        let url = url
        // Commands run on a thread of their own: what one blocks on (a media file probed, a folder
        // checked) never holds a thread of the cooperative pool.
        let task = startOnOwnThread(named: "capture.mqtt") {
            while let entry = await queue.next() {
                let reply: MQTTReply
                switch entry.refusal {
                case .some(let refusal): reply = refusal
                case nil: reply = await handler(entry.command.text ?? "")
                }
                connection.send(.init(topic: url.topic("reply"), payload: Array(entry.command.reply(reply).utf8), retain: false))
            }
        }
        tasks.withLock { $0.append(task) }
    }

    // MARK: Stopping

    /// Stops reading commands, sends what is queued (waiting at most `timeout` for the broker),
    /// publishes `offline` and disconnects.
    public func stop(timeout: Duration = .seconds(5)) async {
        queue.finish()
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
    /// Done; `fields` say what it made (`"photos": ["IMG_0001.jpg"]`, `"location": ...`).
    case success([(String, EventValue)] = [])
    /// `name`: a stable kebab-case error name (`CaptureError.name`, `invalid-command`, `busy` ...).
    case failure(name: String, message: String)

    /// Done, nothing to say.
    public static let success = MQTTReply.success([])

    public static func == (lhs: MQTTReply, rhs: MQTTReply) -> Bool {
        switch (lhs, rhs) {
        case (.success(let a), .success(let b)): a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
        case (.failure(let a, let m), .failure(let b, let n)): a == b && m == n
        default: false
        }
    }

    /// What a command made, as reply fields: files by their name in the output folder.
    static func fields(of result: ControlResult, in folders: SessionFolders) -> [(String, EventValue)] {
        func name(_ path: String) -> EventValue { .string(folders.name(of: path)) }
        switch result {
        case .done: return []
        case .photos(let photos):
            // Every photo taken; the files of those saved to a file (an output without a location keeps them in memory).
            return [("taken", .int(photos.count)), ("photos", .array(photos.compactMap(\.location).map(name)))]
        case .recordingStarted(let output, let location): return [("output", .string(output)), ("location", name(location))]
        case .recordingPaused(let output, let location, let duration), .recordingResumed(let output, let location, let duration):
            return [("output", .string(output)), ("location", name(location)), ("duration", .double(duration.seconds))]
        case .recordingStopped(let output, let result):
            return [("output", .string(output)), ("location", name(result.location)), ("duration", .double(result.duration.seconds))]
        case .mode(let mode): return [("mode", .string(mode.rawValue))]
        case .flashMode(let mode): return [("flash-mode", .string(mode.rawValue))]
        case .torch(let on): return [("torch", .bool(on))]
        case .camera(let input): return [("camera", .string(input.device.uniqueID))]
        case .trimmed(let result, _): return [("location", name(result.location)), ("duration", .double(result.duration))]
        case .thumbnail(_, let location, _): return [("location", name(location))]
        case .picked(let pick, let item):
            // An album item by the name the session's folders give it (`album-videos/NAME`).
            return [("picked", .string(pick)), ("kind", .string(item.kind.rawValue)), ("location", .string(folders.mediaName(of: item.path)))]
        }
    }
}

/// A command as it arrived: its number, the caller's id, its text.
struct MQTTCommand: Sendable {
    /// The longest statement a command carries: as long as the longest `.pipeline` command
    /// (`PipelineDocument.maximumCommandBytes`; `MQTTRemoteTests` checks that they agree). The reader
    /// refuses a longer text too; this limit is the transport's, before anything is read.
    static let maximumStatementBytes = 4096
    /// The longest payload taken: a statement in a JSON envelope.
    static let maximumBytes = maximumStatementBytes + 1024
    /// How much of a command its reply repeats.
    static let echoedBytes = 200

    var seq = 0
    /// The caller's id (`{"id": ...}`, a string or a number), when it gave one.
    var id: EventValue?
    /// The statement (nil: the payload is not a command).
    var text: String?
    /// Why it is not taken (too large, not UTF-8, a bad envelope).
    var problem: MQTTReply?
    /// What the reply repeats of it.
    var echo: String

    init(head: [UInt8], length: Int) {
        echo = String(decoding: head.prefix(Self.echoedBytes), as: UTF8.self)
        guard length <= Self.maximumBytes else {
            problem = .failure(
                name: "invalid-command", message: "the command has \(length) bytes; a command may have at most \(Self.maximumStatementBytes)")
            return
        }
        guard let string = String(validating: head, as: UTF8.self) else {
            problem = .failure(name: "invalid-command", message: "the command is not UTF-8 text")
            return
        }
        guard string.first == "{" else {
            text = string
            return
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(head))) as? [String: Any], let command = object["command"] as? String else {
            problem = .failure(name: "invalid-command", message: "a JSON command is {\"id\": \"ID\", \"command\": \"STATEMENT\"}")
            return
        }
        switch object["id"] {
        case let text as String: id = .string(String(text.prefix(Self.echoedBytes)))
        case let number as NSNumber: id = Double(number.int64Value) == number.doubleValue ? .int(Int(number.int64Value)) : .double(number.doubleValue)
        default: break
        }
        text = command
        echo = String(decoding: command.utf8.prefix(Self.echoedBytes), as: UTF8.self)
    }

    /// The reply's JSON.
    func reply(_ answer: MQTTReply) -> String {
        var fields: [(String, EventValue)] = [("seq", .int(seq))]
        if let id { fields.append(("id", id)) }
        fields.append(("command", .string(echo)))
        switch answer {
        case .success(let extra): fields += [("ok", .bool(true))] + extra
        case .failure(let name, let message): fields += [("ok", .bool(false)), ("error", .string(name)), ("message", .string(message))]
        }
        return "{" + fields.map { "\(EventValue.string($0.0).json): \($0.1.json)" }.joined(separator: ", ") + "}"
    }
}

/// Commands in the order they arrived, each numbered: at most `commandLimit` waiting to be performed
/// (besides the one being performed);
/// beyond that a command waits only for its `busy` answer, and beyond `refusalLimit` of those it is
/// counted and not answered. Fed from the client's thread, read by one task.
final class MQTTCommandQueue: Sendable {
    struct Entry: Sendable {
        var command: MQTTCommand
        /// Answered without being performed.
        var refusal: MQTTReply?
    }

    private struct State {
        var entries: [Entry] = []
        var head = 0
        var commands = 0
        var refusals = 0
        var seq = 0
        var unanswered = 0
        var finished = false
        var waiter: CheckedContinuation<Entry?, Never>?
        /// Who waits for a number of arrivals (`waitForArrivals`), by id.
        var arrivalWaiters: [Int: (count: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextArrivalWaiter = 0
        var arrivals: Int { seq + unanswered }

        /// The arrival waiters whose count is reached, taken out.
        mutating func reachedArrivalWaiters() -> [CheckedContinuation<Bool, Never>] {
            let reached = arrivalWaiters.filter { $0.value.count <= arrivals }.map(\.key)
            return reached.compactMap { arrivalWaiters.removeValue(forKey: $0)?.continuation }
        }
    }

    private let state = Locked(State())
    private let commandLimit: Int
    private let refusalLimit: Int

    init(commandLimit: Int, refusalLimit: Int) {
        self.commandLimit = commandLimit
        self.refusalLimit = refusalLimit
    }

    var unansweredCount: Int { state.withLock { $0.unanswered } }
    /// Commands that have arrived so far (numbered, or counted as unanswered).
    var arrivedCount: Int { state.withLock { $0.arrivals } }

    /// Waits until `count` commands have arrived in all (true), or `timeout` passes (false).
    func waitForArrivals(_ count: Int, timeout: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLock { state -> Int? in
                guard state.arrivals < count else { return nil }
                state.nextArrivalWaiter += 1
                state.arrivalWaiters[state.nextArrivalWaiter] = (count, continuation)
                return state.nextArrivalWaiter
            }
            guard let id else { return continuation.resume(returning: true) }
            // The deadline of the wait, not a count taken after it.
            Task {
                try? await Task.sleep(for: timeout)
                state.withLock { $0.arrivalWaiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
            }
        }
    }

    func arrived(_ command: MQTTCommand) {
        let (handOff, reached) = state.withLock { state -> ((CheckedContinuation<Entry?, Never>, Entry)?, [CheckedContinuation<Bool, Never>]) in
            let handOff = take(command, &state)
            return (handOff, state.arrivalWaiters.isEmpty ? [] : state.reachedArrivalWaiters())
        }
        if let (waiter, entry) = handOff { waiter.resume(returning: entry) }
        for continuation in reached { continuation.resume(returning: true) }
    }

    /// Numbers and files a command (under the lock); the reader to hand it to straight away, if one waits.
    private func take(_ command: MQTTCommand, _ state: inout State) -> (CheckedContinuation<Entry?, Never>, Entry)? {
        guard !state.finished else { return nil }
        var command = command
        var refusal = command.problem
        if refusal == nil, state.commands >= commandLimit {
            refusal = .failure(name: "busy", message: "more than \(commandLimit) commands are waiting; try again")
        }
        if refusal != nil, state.refusals >= refusalLimit {
            state.unanswered += 1
            return nil
        }
        state.seq += 1
        command.seq = state.seq
        let entry = Entry(command: command, refusal: refusal)
        // Straight to a waiting reader: it waits nowhere (the limits count what waits).
        if let waiter = state.waiter {
            state.waiter = nil
            return (waiter, entry)
        }
        if refusal == nil { state.commands += 1 } else { state.refusals += 1 }
        state.entries.append(entry)
        return nil
    }

    /// The next command in order (nil once `finish()` is called and none is left). One reader.
    func next() async -> Entry? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Entry?, Never>) in
            let ready = state.withLock { state -> Entry?? in
                if state.head < state.entries.count {
                    let entry = state.entries[state.head]
                    state.head += 1
                    // Taken: it waits no more.
                    if entry.refusal == nil { state.commands -= 1 } else { state.refusals -= 1 }
                    if state.head > 64, state.head * 2 > state.entries.count {
                        state.entries.removeFirst(state.head)
                        state.head = 0
                    }
                    return .some(entry)
                }
                if state.finished { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// No more commands: the reader's `next()` ends once the queue is empty.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Entry?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
