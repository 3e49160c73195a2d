import Foundation
import Testing

@testable import Capture

/// The owner's rules, as a table: what `CaptureSession` asks of its engine (start, the edits of each
/// apply, stop) for each thing its users and its devices do. No GStreamer pipeline runs: the session
/// runs on `EngineRecorder`'s engines, the test's clock and the test's devices; every wait is for an
/// event. A call is written `start +camera +frames` (the edits the planner gave: `+x` adds,
/// `-x` removes, `-x(drain)` drains a file first, `*x` updates in place, `~x` restarts a source).
@Suite struct OwnerTableTests {
    /// A session on a recorder, a manual clock and devices of the test's own.
    struct Owner {
        let engines = EngineRecorder()
        let clock = ManualClock()
        let devices = TestDevices()
        let session: CaptureSession

        init(
            device: CaptureDevice = .testPattern, reconnects: Bool = false, outputs: [CaptureOutput] = [CaptureVideoDataOutput(name: "frames")]
        )
            throws
        {
            session = CaptureSession(name: "owner-table", engine: engines.factory, clock: clock, devices: devices.source)
            try session.addInput(CaptureDeviceInput(device: device, name: "camera", options: InputOptions(reconnects: reconnects)))
            try session.setSessionPreset(.cif352x288)
            for output in outputs { try session.addOutput(output) }
        }

        /// The engine calls so far, one line each.
        var calls: [String] { engines.calls.map(OwnerTableTests.line) }
    }

    static func line(_ call: EngineRecorder.Call) -> String {
        switch call {
        case .start(let edits): (["start"] + edits.map(Self.word)).joined(separator: " ")
        case .apply(let edits): (["apply"] + edits.map(Self.word)).joined(separator: " ")
        case .stop: "stop"
        }
    }

    static func word(_ edit: Edit) -> String {
        switch edit {
        case .removeBranch(let output, let drain): "-\(output)" + (drain ? "(drain)" : "")
        case .removeSource(let input): "-\(input)"
        case .restartSource(let segment, _): "~\(segment.input)"
        case .swapSource(let old, let segment): "\(old)>\(segment.input)"
        case .retargetSource(let segment): "=\(segment.input)"
        case .addSource(let segment): "+\(segment.input)"
        case .addBranch(let segment): "+\(segment.output)"
        case .updateBranch(let segment): "*\(segment.output)"
        }
    }

    /// A camera of these tests alone, that they unplug and plug back (the test pattern under another id).
    static func camera(_ id: String) -> CaptureDevice {
        CaptureDevice(uniqueID: id, localizedName: "Table camera", mediaType: .video, formats: CaptureDevice.testPattern.formats, kind: .testPattern)
    }

    static let lost = EngineIncident.sourceFailed(
        input: "camera", error: .streamingFailed(element: "camera", message: "the device went away", debug: nil), disconnected: true)

    // MARK: Start and stop

    @Test func startAndStopAreIdempotent() async throws {
        let owner = try Owner()
        await owner.session.stopRunning()
        try await owner.session.startRunning()
        try await owner.session.startRunning()
        #expect(owner.session.isRunning)
        await owner.session.stopRunning()
        await owner.session.stopRunning()
        #expect(!owner.session.isRunning)
        #expect(owner.calls == ["start +camera +frames", "stop"])
    }

    @Test func aFailedStartLeavesTheSessionStoppedAndTheNextStartRuns() async throws {
        let owner = try Owner()
        owner.engines.fail(.start(1))
        await #expect(throws: CaptureError.self) { try await owner.session.startRunning() }
        #expect(!owner.session.isRunning)
        try await owner.session.startRunning()
        #expect(owner.session.isRunning)
        #expect(owner.calls == ["start +camera +frames", "start +camera +frames"])
        await owner.session.stopRunning()
    }

    // MARK: Configuration blocks

    /// Blocks begun on many tasks nest into the session's one block: inner commits apply nothing, the
    /// outermost applies every change at once.
    @Test func blocksOfManyTasksAreAppliedTogetherAtTheOutermostCommit() async throws {
        let owner = try Owner()
        let session = owner.session
        try await session.startRunning()
        session.beginConfiguration()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    session.beginConfiguration()
                    try? session.addOutput(CaptureVideoDataOutput(name: "extra\(worker)"))
                    try? await session.commitConfiguration()
                }
            }
        }
        #expect(owner.calls == ["start +camera +frames"])
        #expect(session.isConfiguring)
        try await session.commitConfiguration()
        #expect(owner.calls.count == 2)
        #expect(Set(owner.calls.last?.split(separator: " ").map(String.init) ?? []) == ["apply", "+extra0", "+extra1", "+extra2", "+extra3"])
        await session.stopRunning()
    }

    /// Changes made one after another reach the engine in that order, one apply each; a block's commit
    /// returns after the applies queued before it.
    @Test func commitsAreAppliedInTheOrderTheyWereMade() async throws {
        let owner = try Owner()
        let session = owner.session
        try await session.startRunning()
        for name in ["a", "b", "c"] { try session.addOutput(CaptureVideoDataOutput(name: name)) }
        try session.removeOutput(try #require(session.output(named: "a")))
        session.beginConfiguration()
        try await session.commitConfiguration()
        #expect(owner.calls == ["start +camera +frames", "apply +a", "apply +b", "apply +c", "apply -a", "apply"])
        await session.stopRunning()
    }

    /// Commits of many tasks at once: the engine never runs two calls at a time, and what runs at the
    /// end is what was committed last.
    @Test func concurrentCommitsAreSerialised() async throws {
        let owner = try Owner()
        let session = owner.session
        try await session.startRunning()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for round in 0..<3 {
                        let output = CaptureVideoDataOutput(name: "w\(worker)r\(round)")
                        session.beginConfiguration()
                        try? session.addOutput(output)
                        try? await session.commitConfiguration()
                        if round == 2 { continue }  // the last of each worker stays
                        session.beginConfiguration()
                        try? session.removeOutput(output)
                        try? await session.commitConfiguration()
                    }
                }
            }
        }
        #expect(owner.engines.mostInFlight == 1)
        let committed = session.outputs.map(\.name)
        #expect(Set(committed) == ["frames", "w0r2", "w1r2", "w2r2", "w3r2"])
        #expect(Set(owner.engines.current.branches.map(\.output)) == Set(committed))
        await session.stopRunning()
    }

    // MARK: Roll-back

    /// An apply that fails half-way: the commit throws, the session's configuration is what it was,
    /// and the engine is given the edits that put back the graph that ran.
    @Test func aFailedApplyRollsBackTheOwnerAndTheEngine() async throws {
        let owner = try Owner()
        let session = owner.session
        try await session.startRunning()
        let before = owner.engines.current
        owner.engines.fail(.apply(1), afterEdits: 1)
        session.beginConfiguration()
        try session.removeOutput(try #require(session.output(named: "frames")))
        try session.addOutput(CaptureVideoDataOutput(name: "other"))
        await #expect(throws: CaptureError.self) { try await session.commitConfiguration() }
        #expect(session.outputs.map(\.name) == ["frames"])
        #expect(session.isRunning)
        #expect(owner.calls == ["start +camera +frames", "apply -frames +other", "apply +frames"])
        #expect(owner.engines.current == before)
        // The next commit starts from what runs.
        session.beginConfiguration()
        try session.addOutput(CaptureVideoDataOutput(name: "late"))
        try await session.commitConfiguration()
        #expect(owner.calls.last == "apply +late")
        await session.stopRunning()
    }

    // MARK: Recordings

    /// A recording is the owner's: a commit that does not touch its output leaves its branch alone, and
    /// stopping it drains its branch (the file is finished) and forgets it.
    @Test func aRecordingSurvivesACommitThatDoesNotTouchItAndItsStopFinishesIt() async throws {
        let directory = try TemporaryDirectory()
        let movie = CaptureMovieFileOutput(name: "movie")
        let owner = try Owner(outputs: [CaptureVideoDataOutput(name: "frames"), movie])
        let session = owner.session
        try await session.startRunning()
        _ = try await movie.startRecording(to: directory.path("take.mp4"))
        #expect(owner.calls == ["start +camera +frames", "apply +movie"])
        session.beginConfiguration()
        try session.addOutput(CaptureVideoDataOutput(name: "more"))
        try await session.commitConfiguration()
        #expect(owner.calls.last == "apply +more")
        #expect(movie.isRecording)
        #expect(session.state.withLock { $0.recordings.keys.sorted() } == ["movie"])
        _ = try await movie.stopRecording()
        #expect(owner.calls.last == "apply -movie(drain)")
        #expect(!movie.isRecording)
        #expect(session.state.withLock { $0.recordings.isEmpty })
        await session.stopRunning()
        #expect(owner.calls.last == "stop")
    }

    // MARK: Incidents and reconnection

    /// A running session on a reconnecting camera of its own whose device went: returns once the
    /// session stopped and waits on the clock for the device, with the events seen until the stop.
    static func waitingForItsDevice(
        _ id: String
    ) async throws -> (Owner, CaptureDevice, AsyncStream<SessionEvent>, [SessionEvent]) {
        let device = Self.camera(id)
        let owner = try Owner(device: device, reconnects: true)
        let events = owner.session.events()
        try await owner.session.startRunning()
        owner.engines.emit(Self.lost)
        let stopped = await collectEvents(events, until: { $0.name == "session-stopped" })
        // The session looks for its device, then waits on the clock.
        #expect(await owner.clock.untilSomethingSleeps(), "the session waits for its device")
        return (owner, device, events, stopped)
    }

    /// A device that goes under a reconnecting input: interrupted, stopped, waiting; back: the session
    /// starts again and says `resumed`.
    @Test func aLostDeviceInterruptsTheSessionAndItsReturnResumesIt() async throws {
        let (owner, device, events, stopped) = try await Self.waitingForItsDevice("owner-table-replug")
        let session = owner.session
        #expect(stopped.map(\.name) == ["session-started", "runtime-error", "interrupted", "session-stopped"])
        #expect(session.isAwaitingReconnection && session.isInterrupted && !session.isRunning)
        #expect(owner.calls == ["start +camera +frames", "stop"])
        owner.devices.events.post(.connected(device))
        let driver = owner.clock.drive(by: .milliseconds(500))
        let resumed = await collectEvents(events, until: { $0.name == "resumed" })
        driver.cancel()
        #expect(resumed.map(\.name) == ["session-started", "resumed"])
        #expect(session.isRunning && !session.isInterrupted && !session.isAwaitingReconnection)
        #expect(owner.calls == ["start +camera +frames", "stop", "start +camera +frames"])
        await session.stopRunning()
    }

    /// The user's stop while the session waits for its device ends the wait: the device coming back
    /// later starts nothing.
    @Test func stoppingDuringReconnectionEndsTheWait() async throws {
        let (owner, device, _, _) = try await Self.waitingForItsDevice("owner-table-replug-stop")
        let session = owner.session
        #expect(session.isAwaitingReconnection)
        await session.stopRunning()
        #expect(!session.isAwaitingReconnection && !session.isRunning)
        // The wait's sleep was cancelled with it: nothing sleeps on the clock any more.
        #expect(owner.clock.sleepers == 0)
        owner.devices.events.post(.connected(device))
        owner.clock.advance(by: .seconds(5))
        #expect(owner.calls == ["start +camera +frames", "stop"])
    }

    /// A source failure that is no disconnection (or an input that does not reconnect) interrupts and
    /// stops the session; it stays interrupted, waiting for nothing.
    @Test func aFailedSourceInterruptsAndStops() async throws {
        let owner = try Owner()
        let session = owner.session
        let events = session.events()
        try await session.startRunning()
        owner.engines.emit(.sourceFailed(input: "camera", error: .streamingFailed(element: "camera", message: "read error", debug: nil), disconnected: false))
        let seen = await collectEvents(events, until: { $0.name == "session-stopped" })
        #expect(seen.map(\.name) == ["session-started", "runtime-error", "interrupted", "session-stopped"])
        #expect(session.isInterrupted && !session.isRunning && !session.isAwaitingReconnection)
        #expect(owner.calls == ["start +camera +frames", "stop"])
        // A second start ends the interruption.
        try await session.startRunning()
        #expect(session.isRunning && !session.isInterrupted)
        await session.stopRunning()
    }

    /// An incident of an engine that is gone (delivered late, after a stop and a new start) changes
    /// nothing.
    @Test func anIncidentOfAnEarlierEngineIsIgnored() async throws {
        let owner = try Owner()
        let session = owner.session
        try await session.startRunning()
        await session.stopRunning()
        try await session.startRunning()
        owner.engines.emit(Self.lost, fromEngine: 0)
        #expect(session.isRunning && !session.isInterrupted)
        #expect(owner.calls == ["start +camera +frames", "stop", "start +camera +frames"])
        await session.stopRunning()
    }
}
