import Foundation
import GStreamer

/// Records movies, like `AVCaptureMovieFileOutput`: H.264/AAC MP4 by default; MKV, WebM and MOV,
/// VP8/VP9/Motion JPEG and Opus on request; audio from an audio input of the session in sync with the
/// video (one pipeline clock).
///
/// The output has no branch while it does not record. `startRecording` compiles one (a chain from the
/// video input's tee, one from the audio input's tee, into the muxer and a file sink) and the session
/// adds it to the running pipeline; `stopRecording` removes it again, which sends the end of the
/// stream through it and waits for the muxer to finish the file. Every other way a recording can end
/// (`stopRunning`, removing the output, a failing device) takes the same path.
///
/// MP4 and MOV are written in fragments (`movieFragmentInterval`, 1 s) at their final location, so a
/// process that is killed leaves a file that plays up to its last fragment.
public final class CaptureMovieFileOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: mutable state is behind locks (`Locked`); the streaming-thread probes only touch the
    // current recording's state lock.
    private let settingsState: Locked<MovieSettings>
    private let current = Locked<MovieRecording?>(nil)
    private let lastResultState = Locked<MovieRecordingResult?>(nil)
    let delegateQueue = DispatchQueue(label: "capture.movie-file-output")
    /// With `settings.preRoll`: the ring of encoded video and the recording it feeds.
    private let preRollBuffer = PreRollBuffer()

    /// A movie output named `name` that records with `settings`; it adds its recording branch to the
    /// pipeline only while it records.
    public init(name: String = "movie", settings: MovieSettings = MovieSettings()) {
        settingsState = Locked(settings)
        super.init(name: name)
    }

    /// `movie`.
    public override var kind: String { "movie" }

    // MARK: Settings

    /// Codecs, container, limits and default location. Read when a recording starts.
    public var settings: MovieSettings {
        get { settingsState.value }
        set { settingsState.value = newValue }
    }

    /// The longest a recording may be; reaching it finishes the file with `maximumDurationReached` and success.
    public var maxRecordedDuration: Duration? {
        get { settingsState[\.maxRecordedDuration] }
        set { settingsState[\.maxRecordedDuration] = newValue }
    }

    /// The largest a file may grow, in bytes; reaching it finishes the file with `maximumFileSizeReached` and success.
    public var maxRecordedFileSize: Int64? {
        get { settingsState[\.maxRecordedFileSize] }
        set { settingsState[\.maxRecordedFileSize] = newValue }
    }

    /// The free space, in bytes, below which a recording stops (`minimumFreeDiskSpaceReached`, success).
    public var minFreeDiskSpaceLimit: Int64? {
        get { settingsState[\.minFreeDiskSpaceLimit] }
        set { settingsState[\.minFreeDiskSpaceLimit] = newValue }
    }

    /// How often a fragment of an MP4/MOV is completed on disk (nil: not fragmented). Default 1 s.
    public var movieFragmentInterval: Duration? {
        get { settingsState[\.movieFragmentInterval] }
        set { settingsState[\.movieFragmentInterval] = newValue }
    }

    // MARK: State

    /// True from a successful `startRecording` until its file is finished.
    public var isRecording: Bool { current.value != nil }

    /// True between `pauseRecording()` and `resumeRecording()`.
    public var isRecordingPaused: Bool {
        current.value?.state.withLock { $0.timeline.isPaused } ?? false
    }

    /// Media time recorded so far (pauses excluded); after the recording, the finished file's.
    public var recordedDuration: Duration {
        if let recording = current.value {
            return .nanoseconds(Int64(recording.state.withLock { $0.timeline.recordedDuration }))
        }
        return lastResultState.value?.duration ?? .zero
    }

    /// Video frames of the current recording captured while it was paused and left out (0 when none runs).
    var videoFramesDroppedWhilePaused: Int {
        current.value?.state.withLock { $0.timeline.videoFramesDroppedWhilePaused } ?? 0
    }

    /// Bytes recorded so far (media sent to the file, or the file's size when larger); after the
    /// recording, the finished file's size.
    public var recordedFileSize: Int64 {
        if let recording = current.value {
            return max(recording.sizeOnDisk, recording.state.withLock { $0.mediaBytes })
        }
        return lastResultState.value?.fileSize ?? 0
    }

    /// The file being recorded, nil when not recording.
    public var outputFileURL: URL? { current.value?.url }

    /// How the last finished recording ended.
    public var lastRecording: MovieRecordingResult? { lastResultState.value }

    // MARK: Recording

    /// Starts recording to a file URL. See `startRecording(to:delegate:)`.
    @discardableResult
    public func startRecording(to url: URL, delegate: (any CaptureFileOutputRecordingDelegate)? = nil) async throws(CaptureError) -> URL {
        try await startRecording(to: url.path, delegate: delegate)
    }

    /// Starts recording on the running session and returns the file's URL once the recording branch is
    /// live. `location` (default: `settings.location`) is a path or a `%d` pattern (`clip_%03d.mp4`) that
    /// takes the next free number; an existing file at a plain path is `fileAlreadyExists` unless
    /// `settings.overwritesExistingFile`. Typed errors: `notRunning`, `recordingInProgress` (the running
    /// recording goes on), `invalidMovieSettings`, `noAudioInput`, `locationNotWritable`,
    /// `minimumFreeDiskSpaceReached`, `elementMissing`. The output keeps `delegate` until the recording
    /// has finished.
    ///
    /// ```swift
    /// let movie = CaptureMovieFileOutput(name: "movie", settings: MovieSettings(location: "clip_%03d.mp4"))
    /// try session.addOutput(movie)
    /// try await session.startRunning()
    /// let url = try await movie.startRecording()
    /// try await Task.sleep(for: .seconds(10))
    /// let result = try await movie.stopRecording()
    /// print(url.path, result.duration, result.success)
    /// ```
    @discardableResult
    public func startRecording(to location: String? = nil, delegate: (any CaptureFileOutputRecordingDelegate)? = nil) async throws(CaptureError) -> URL {
        guard let session, session.isRunning else { throw .notRunning(object: description) }
        if let running = current.value { throw .recordingInProgress(output: name, location: running.location) }
        let settings = self.settings
        guard let requested = location ?? settings.location, !requested.isEmpty else {
            throw .invalidMovieSettings(output: name, reason: "no location: pass one to startRecording or set settings.location")
        }
        try FileNaming.checkLocation(requested)
        // Fail early, before a file is made, on what does not depend on the compiled session.
        let audioInputs = session.inputs.filter { $0.mediaType == .audio }.map(\.name)
        let hasAudio = settings.audioInput.map { audioInputs.contains($0) } ?? !audioInputs.isEmpty
        _ = try settings.resolvedFormat(for: requested, hasAudioInput: hasAudio, output: name)

        let file = try reserveFile(requested, settings: settings)
        let recording = MovieRecording(file: file, settings: settings, delegate: delegate)
        let claimed = current.withLock { slot -> MovieRecording? in
            if let running = slot { return running }
            slot = recording
            return nil
        }
        if let running = claimed {
            file.finish(keep: false)
            throw .recordingInProgress(output: name, location: running.location)
        }
        if let preRoll = settings.effectivePreRoll {
            do throws(CaptureError) {
                try startPreRollRecording(recording, preRoll: preRoll, path: recording.writePath)
            } catch {
                current.withLock { if $0 === recording { $0 = nil } }
                file.finish(keep: false)
                throw error
            }
            recording.publishWhenPlayable()
            if let limit = settings.minFreeDiskSpaceLimit { monitorFreeSpace(recording, limit: limit) }
            return recording.url
        }
        do throws(CaptureError) {
            // A command to the session's owner: it compiles the branch from this recording and adds it.
            try await session.startRecording(recording, for: self)
        } catch {
            if recording.state.withLock({ $0.attached }) {
                // The session put its previous graph back, which removed the branch: finish the file.
                finish(recording)
            } else {
                current.withLock { if $0 === recording { $0 = nil } }
                file.finish(keep: false)
            }
            throw error
        }
        recording.publishWhenPlayable()
        if let limit = settings.minFreeDiskSpaceLimit { monitorFreeSpace(recording, limit: limit) }
        return recording.url
    }

    /// Stops the recording and returns once its file is finished (EOS through the branch, the muxer's
    /// last fragment and index written), bounded by the session's drain timeout. Typed error:
    /// `notRecording`.
    @discardableResult
    public func stopRecording() async throws(CaptureError) -> MovieRecordingResult {
        guard let recording = current.value else { throw .notRecording(output: name) }
        return await stop(recording, error: nil, requested: true)
    }

    /// Pauses the recording: what the inputs capture from now on is left out of the file, and the file
    /// goes on after `resumeRecording()` without a gap. Pausing a paused recording does nothing.
    public func pauseRecording() throws(CaptureError) { try setPaused(true) }

    /// Resumes a paused recording. Resuming a recording that is not paused does nothing.
    public func resumeRecording() throws(CaptureError) { try setPaused(false) }

    private func setPaused(_ pausing: Bool) throws(CaptureError) {
        guard let recording = current.value else { throw .notRecording(output: name) }
        if recording.settings.effectivePreRoll != nil {
            throw .invalidMovieSettings(
                output: name, reason: "a recording with pre-roll cannot be paused (its frames are encoded ahead); stop it and start another")
        }
        let changed = recording.state.withLock { state -> Bool in
            guard state.phase == .recording, let now = handleState.value?.runningTime else { return false }
            return pausing ? state.timeline.pause(at: now) : state.timeline.resume(at: now)
        }
        guard changed else { return }
        let duration = recordedDuration.seconds
        if pausing {
            emit(.recordingPaused(output: name, location: recording.location, duration: duration))
            delegateQueue.async { recording.delegate?.fileOutput(self, didPauseRecordingTo: recording.url) }
        } else {
            emit(.recordingResumed(output: name, location: recording.location, duration: duration))
            delegateQueue.async { recording.delegate?.fileOutput(self, didResumeRecordingTo: recording.url) }
        }
    }

    // MARK: Files

    /// Makes the temporary file the recording writes, next to its destination: the next free name
    /// of a pattern, or the plain path (existing: an error unless overwriting is asked for, and then
    /// only a regular file is replaced). The final name is given once the file holds a frame
    /// (`PendingFile`), so a device, a pipe or a link at the location is never written through.
    private func reserveFile(_ requested: String, settings: MovieSettings) throws(CaptureError) -> PendingFile {
        let absolute = URL(fileURLWithPath: requested).standardizedFileURL.path
        let directory = try FileNaming.prepareFolder(for: absolute)
        if let limit = settings.minFreeDiskSpaceLimit, let free = Self.freeSpace(directory), free < limit {
            throw .minimumFreeDiskSpaceReached(output: name, path: directory, bytes: limit)
        }
        let pathExtension = (absolute as NSString).pathExtension
        return try PendingFile(requested: absolute, overwrite: settings.overwritesExistingFile, extension: pathExtension)
    }

    /// Free bytes for an unprivileged writer on the file system holding `path`.
    static func freeSpace(_ path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    private func monitorFreeSpace(_ recording: MovieRecording, limit: Int64) {
        let directory = (recording.location as NSString).deletingLastPathComponent
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(200))
                guard !Task.isCancelled, let free = Self.freeSpace(directory), free < limit else { continue }
                guard let self else { return }
                let first = recording.state.withLock { state -> Bool in
                    guard !state.limitHit else { return false }
                    state.limitHit = true
                    state.timeline.stopAtLatest()
                    return true
                }
                if first {
                    _ = await self.stop(recording, error: .minimumFreeDiskSpaceReached(output: self.name, path: directory, bytes: limit), requested: false)
                }
                return
            }
        }
        let finished = recording.state.withLock { state -> Bool in
            guard state.phase != .finished else { return true }
            state.monitor = task
            return false
        }
        if finished { task.cancel() }
    }

    // MARK: Branch

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        let settings = self.settings
        if settings.effectivePreRoll != nil {
            // Pre-roll: one branch for as long as the session runs, recording or not.
            return try PreRollBranch.build(output: name, description: description, settings: settings, context: context)
        }
        guard let request = context.recording else {
            if context.assumesRecording, let location = settings.location, !location.isEmpty {
                // The branch a recording to the settings' location would add (the next free name of a
                // pattern); nothing is written.
                let absolute = URL(fileURLWithPath: location).standardizedFileURL.path
                let path = FileNaming.isPattern(absolute) ? FileNaming.nextFree(absolute) : absolute
                return try MovieBranchBuilder.build(
                    output: name, description: description, settings: settings, location: path, context: context, mayShare: overlays.isEmpty
                ).segment
            }
            // Idle: no branch, but settings that can never work are refused when the session is configured.
            if let location = settings.location { try FileNaming.checkLocation(location) }
            let hasAudio = settings.audioInput.map { wanted in context.audioInputs.contains { $0.input == wanted } } ?? !context.audioInputs.isEmpty
            _ = try settings.resolvedFormat(for: settings.location, hasAudioInput: hasAudio, output: name)
            return nil
        }
        if request.recording.hasEnded { return nil }
        if let kept = request.branch {
            // The recording keeps its branch; an input it reads that is replaced in the same block (a
            // camera switch) is read in its place, in the same file. When an input it reads leaves
            // without a replacement, the branch goes (and the file is finished).
            // A shared encoder it reads stays for it as long as the encoder's own input does.
            let branch = kept.reading(context.replacedInputs)
            var inputs = Set([context.videoInput?.input].compactMap { $0 } + context.audioInputs.map(\.input))
            for encoder in branch.reads where inputs.contains(encoder.input) { inputs.insert(encoder.name) }
            return branch.inputs.allSatisfy(inputs.contains) ? branch : nil
        }
        let recording = request.recording
        let plan = try MovieBranchBuilder.build(
            output: name, description: description, settings: recording.settings,
            location: recording.writePath, context: context, mayShare: overlays.isEmpty)
        // Frames the gate keeps go through a frame-rate element (not when a stream's encoder is read).
        if plan.sharedEncoder == nil, let rate = plan.frameRate {
            recording.state.withLock { $0.timeline.resample(to: rate) }
        }
        return plan.segment
    }

    /// The track matrix of the recording (MP4, MOV): the overlays are drawn upright as a player shows it.
    override var overlayTurn: PixelTurn {
        MovieBranchBuilder.turns(of: connection, in: current.value?.container ?? settings.container(for: settings.location)).matrix
    }

    override func attach(_ handle: BranchHandle) {
        super.attach(handle)
        if let preRoll = settings.effectivePreRoll {
            let names = MovieBranchBuilder.Names(output: name)
            handle.element(names.sink)?.setAppSinkCallbacks(onSample: { [weak self] sample in
                guard let self, let verdict = self.preRollBuffer.receive(sample, length: preRoll) else { return }
                // A limit: the time line drops what comes after it; the stop ends the writer.
                if case .limitReached(let error) = verdict, let writer = self.preRollBuffer.writer {
                    self.stopInBackground(writer.recording, error: error)
                }
            })
            return
        }
        guard let recording = current.value else { return }
        let ready = recording.state.withLock { state -> Bool in
            guard !state.attached else { return false }
            state.attached = true
            if state.phase == .starting { state.phase = .recording }
            return true
        }
        guard ready else { return }
        let names = MovieBranchBuilder.Names(output: name)
        // A recording that reads a stream's encoder gates encoded frames (its branch has no encoder).
        let encoded = handle.element(names.encodedQueue) != nil
        let gated: [(String, MovieTimeline.Media)] = [(encoded ? names.encodedQueue : names.videoQueue, .video), (names.audioQueue, .audio)]
        for (element, media) in gated {
            handle.element(element)?.staticPad("src")?.addProbe([.buffer, .eventDownstream]) { [weak self] pad, info in
                self?.gate(info, media: media, recording: recording, at: pad, encoded: encoded && media == .video) ?? .ok
            }
        }
        for encoder in [encoded ? names.parser : names.videoEncoder, names.audioEncoder] {
            let isVideo = encoder != names.audioEncoder
            handle.element(encoder)?.staticPad("src")?.addProbe(.buffer) { [weak self] _, info in
                if isVideo { recording.state.withLock { $0.encodedVideoFrames += 1 } }
                self?.count(info, recording: recording)
                return .ok
            }
        }
        // What the muxer hands the file sink: the end of the stream, and where each byte goes.
        handle.element(names.sink)?.staticPad("sink")?.addProbe([.buffer, .eventDownstream]) { _, info in
            recording.trackWrite(info)
            return .ok
        }
    }

    override func detach() {
        super.detach()
        if let writer = preRollBuffer.writer {
            // The session stops or the output leaves: the recording's file is finished with what it has
            // before the branch is gone (as a recording branch is drained).
            let recording = writer.recording
            preRollBuffer.end(writer)
            recording.state.withLock { state in
                if state.phase == .starting || state.phase == .recording { state.phase = .stopping }
            }
            writer.finish(timeout: session?.drainTimeout ?? .seconds(5))
            finish(recording)
        }
        preRollBuffer.clear()
        guard let recording = current.value, recording.state.withLock({ $0.attached }) else { return }
        finish(recording)
    }

    // MARK: Pre-roll

    /// The file pipeline of a pre-roll recording in gst-launch terms, for `capture compile`.
    var preRollLaunchDescription: String {
        let settings = self.settings
        let container = settings.container(for: settings.location)
        var muxer = container.muxerFactory
        if let fragment = settings.movieFragmentInterval, fragment > .zero {
            muxer +=
                container == .mp4 || container == .mov
                ? " fragment-duration=\(max(1, Int(fragment.seconds * 1000)))"
                : " max-cluster-duration=\(Int64(fragment.seconds * 1e9))"
        }
        let location = settings.location.map { " location=\(ElementSpec.quote($0))" } ?? ""
        return
            "appsrc name=\(name)_preroll_source format=time ! \(muxer) name=\(name)_preroll_mux ! filesink name=\(name)_preroll_sink\(location) sync=false buffer-mode=unbuffered"
    }

    /// Starts a pre-roll recording: its file pipeline, fed the ring from `preRoll` before now, then
    /// the live frames. Typed errors: `notRunning` (the branch is not live), `elementMissing`.
    private func startPreRollRecording(_ recording: MovieRecording, preRoll: Duration, path: String) throws(CaptureError) {
        guard handleState.value != nil else { throw .notRunning(object: description) }
        let container = recording.settings.container(for: path)
        let output = name
        let writer = try PreRollWriter(recording: recording, output: name, container: container) { [weak self] first in
            let seconds = Double(first) / 1e9
            recording.state.withLock { $0.firstTimestamp = first }
            self?.emit(.recordingStarted(output: output, location: recording.location, firstTimestamp: seconds))
            if let self { self.delegateQueue.async { recording.delegate?.fileOutput(self, didStartRecordingTo: recording.url, firstTimestamp: seconds) } }
        }
        try writer.start()
        recording.state.withLock { state in
            state.attached = true
            state.phase = .recording
        }
        _ = preRollBuffer.begin(writer, length: preRoll)
    }

    /// Ends a pre-roll recording: no frame reaches its file after this; the end of the stream goes
    /// through its muxer; the file is finished.
    private func stopPreRollRecording(_ recording: MovieRecording) async {
        guard let writer = preRollBuffer.writer, writer.recording === recording else {
            finish(recording)
            return
        }
        preRollBuffer.end(writer)
        let timeout = session?.drainTimeout ?? .seconds(5)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                writer.finish(timeout: timeout)
                done.resume()
            }
        }
        finish(recording)
    }

    // MARK: Ending

    /// Cuts the time line now, has the session remove the branch (which drains it) and waits for the file.
    func stop(_ recording: MovieRecording, error: CaptureError?, requested: Bool) async -> MovieRecordingResult {
        let now = handleState.value?.runningTime
        let first = recording.state.withLock { state -> Bool in
            guard state.phase == .starting || state.phase == .recording else { return false }
            state.phase = .stopping
            state.stopRequested = requested
            state.stopError = state.stopError ?? error
            if let now { state.timeline.stop(at: now) }
            return true
        }
        if first {
            delegateQueue.async { recording.delegate?.fileOutput(self, willFinishRecordingTo: recording.url, error: error) }
            if recording.settings.effectivePreRoll != nil {
                await stopPreRollRecording(recording)
                return recording.state.withLock { $0.result }
                    ?? MovieRecordingResult(
                        location: recording.location, duration: .zero, fileSize: recording.sizeOnDisk, success: false,
                        error: error, firstTimestamp: nil, videoFrameCount: 0)
            }
            // The owner removes the branch, which drains it; a session that is stopping or stopped
            // drains it itself.
            await session?.stopRecording(for: name)
            // A recording stopped before its branch went live has no file to finish.
            if !recording.state.withLock({ $0.attached }) { finish(recording) }
        }
        let timeout = (session?.drainLimit ?? .seconds(120)) + .seconds(5)
        if let result = try? await recording.result.value(
            timeout: timeout, timeoutError: .timedOut(waitingFor: "\(recording.location) to be finished", seconds: timeout.seconds))
        {
            return result
        }
        // The branch never came back: report the file as it is (the promise has already failed with
        // the time-out, so the result is read from the recording).
        finish(recording)
        return recording.state.withLock { $0.result }
            ?? MovieRecordingResult(
                location: recording.location, duration: .zero, fileSize: recording.sizeOnDisk, success: false,
                error: .timedOut(waitingFor: "\(recording.location) to be finished", seconds: timeout.seconds), firstTimestamp: nil, videoFrameCount: 0)
    }

    /// An element of the recording's branch failed: the recording ends, and its result says why.
    override func branchFailed(_ error: CaptureError) {
        guard let recording = current.value else { return }
        recording.state.withLock { state in
            if state.branchError == nil { state.branchError = error }
        }
    }

    /// Reports the end of a recording once: its result, the `recording-finished` event, the delegate.
    private func finish(_ recording: MovieRecording) {
        struct Snapshot {
            var requested: Bool, error: CaptureError?, sawEOS: Bool, expectedSize: Int64, frames: Int, duration: UInt64, first: UInt64?
            var encoded: Int, branchError: CaptureError?
        }
        let snapshot = recording.state.withLock { state -> Snapshot? in
            guard state.phase != .finished else { return nil }
            state.phase = .finished
            state.monitor?.cancel()
            state.monitor = nil
            state.lastVideoFrame = nil
            return Snapshot(
                requested: state.stopRequested, error: state.stopError, sawEOS: state.sawEOS, expectedSize: state.expectedSize,
                frames: state.timeline.videoFrames, duration: state.timeline.recordedDuration, first: state.firstTimestamp,
                encoded: state.encodedVideoFrames, branchError: state.branchError)
        }
        guard let snapshot else { return }
        recording.stopPublishing()
        // The file (or its folder) removed while recording: the data went to a file no one can open.
        // Once published, the final name is the user's: a file removed there was removed on purpose.
        let vanished =
            !FileNaming.existsAsAnything(recording.writePath)
            || (recording.file.isPublished && !FileNaming.existsAsAnything(recording.location))
        // MP4 and MOV show the connection's turn through the video track's matrix (written once the
        // muxer is done with the header).
        let matrix = MovieBranchBuilder.turns(of: connection, in: recording.container).matrix
        if !matrix.isNone, !vanished { MP4TrackMatrix.write(rotation: matrix.rotation, to: recording.writePath) }
        let size = recording.sizeOnDisk
        // The file gets (or keeps) its final name only when it holds a whole frame: a complete file,
        // or one that was cut short but plays up to a fragment. Otherwise nothing is left behind, and
        // a file it was to replace stays as it was.
        let complete =
            snapshot.sawEOS && size >= snapshot.expectedSize && snapshot.frames > 0 && size > 0
            && snapshot.encoded > 0 && snapshot.branchError == nil
        let playable =
            !vanished && size > 0 && snapshot.encoded > 0
            && (complete || MovieFileScan.holdsVideoFrame(recording.writePath, container: recording.container))
        let kept = recording.file.finish(keep: playable)
        // Complete: the muxer reached the end of the stream and every byte it wrote is in the file.
        // Complete also means encoded video reached the muxer and no element of the branch failed.
        let success = complete && kept != nil
        var error = snapshot.error
        if vanished {
            error = .recordingFailed(output: name, location: recording.location, reason: "the file or its folder was removed while it was being recorded")
        }
        let directory = (recording.location as NSString).deletingLastPathComponent
        // A full disk is the cause even when the write error also stopped the session's source (the
        // flow error travels up through the tee) and the session reports an interruption.
        if !success, error == nil, let free = Self.freeSpace(directory), free < 64 * 1024 {
            error = .diskFull(path: recording.location)
        }
        if let failure = snapshot.branchError, error == nil {
            error = .recordingFailed(output: name, location: recording.location, reason: failure.description)
        }
        // Recorded, but its name could not be given: the file stays under its temporary name, which
        // the result names, and the error says why and where.
        var location = recording.location
        if let unnamed = recording.file.unnamedError {
            location = recording.writePath
            error = .recordingFailed(
                output: name, location: recording.location,
                reason: "it could not be given its name (\(unnamed)); what was recorded is kept as \(recording.writePath)")
        }
        if error == nil, !snapshot.requested, session?.isInterrupted == true {
            error = .recordingInterrupted(output: name, location: recording.location)
        }
        if !success && error == nil {
            let reason = snapshot.frames == 0 || snapshot.encoded == 0 ? "no frame reached it" : "the muxer did not reach the end of the stream"
            error = .recordingFailed(output: name, location: recording.location, reason: reason)
        }
        let result = MovieRecordingResult(
            location: location, duration: .nanoseconds(Int64(snapshot.duration)), fileSize: size,
            success: success, error: error, firstTimestamp: snapshot.first.map { Double($0) / 1e9 },
            videoFrameCount: snapshot.frames)
        lastResultState.value = result
        recording.state.withLock { $0.result = result }
        current.withLock { if $0 === recording { $0 = nil } }
        emit(.recordingFinished(output: name, result))
        delegateQueue.async { recording.delegate?.fileOutput(self, didFinishRecordingTo: recording.url, result: result) }
        recording.result.succeed(result)
        if success, let library = recording.settings.library {
            let (output, location) = (name, recording.location)
            Task.detached { [weak self] in
                let saved: Result<MediaLibrary.Item, CaptureError>
                do throws(CaptureError) { saved = .success(try await library.save(videoAt: location)) } catch { saved = .failure(error) }
                self?.emit(.savedToLibrary(output: output, source: location, saved))
            }
        }
    }

    /// Posts a session event from any thread.
    func emit(_ kind: SessionEvent.Kind) {
        if let handle = handleState.value { handle.post(kind) } else { session?.post(kind) }
    }
}
