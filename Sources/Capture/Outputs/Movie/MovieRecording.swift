import Foundation
import GStreamer

/// One recording: its file, its settings and what its pad probes learn while it runs.
final class MovieRecording: Sendable {
    enum Phase: Sendable { case starting, recording, stopping, finished }

    struct State: Sendable {
        var phase = Phase.starting
        /// The branch is (or was) part of the running pipeline.
        var attached = false
        var timeline: MovieTimeline
        /// The segment each stream arrived with (to turn its timestamps into running time).
        var segments: [MovieTimeline.Media: Segment] = [:]
        var stopRequested = false
        var stopError: CaptureError?
        var limitHit = false
        /// Encoded bytes handed to the muxer.
        var mediaBytes: Int64 = 0
        /// Encoded video frames handed to the muxer: a file without one is no movie.
        var encodedVideoFrames = 0
        /// A recording that reads a shared encoder waits for a key frame: at its start and after a pause
        /// (the frames between cannot be decoded without the ones left out).
        var awaitingKeyFrame = true
        /// A key frame was asked of the shared encoder for the current wait.
        var keyFrameRequested = false
        /// An element of the branch failed (an encoder that could not start ...): the file is not complete.
        var branchError: CaptureError?
        /// The end of the stream reached the file sink: the muxer finished the file.
        var sawEOS = false
        /// Where the file sink writes next, and the end of the file as the muxer wrote it: a file on
        /// disk shorter than that lost data (full disk, I/O error).
        var writePosition: Int64 = 0
        var expectedSize: Int64 = 0
        var firstTimestamp: UInt64?
        /// The last video frame kept, at its file time, while the branch resamples the frame rate: the
        /// end of the stream may need a copy of it (`MovieTimeline.closingFrameTime`). Let go at the
        /// end of the stream and when the recording finishes.
        var lastVideoFrame: Buffer?
        var monitor: Task<Void, Never>?
        /// The result, once finished.
        var result: MovieRecordingResult?
    }

    /// The file: written under a temporary name, given its final name once it holds a whole frame.
    let file: PendingFile
    let settings: MovieSettings
    let delegate: (any CaptureFileOutputRecordingDelegate)?
    let result = Promise<MovieRecordingResult>()
    let state: Locked<State>
    /// Signalled when the recording no longer waits to be published (`stopPublishing`).
    private let publishingEnds = DispatchSemaphore(value: 0)

    init(file: PendingFile, settings: MovieSettings, delegate: (any CaptureFileOutputRecordingDelegate)?) {
        self.file = file
        self.settings = settings
        self.delegate = delegate
        state = Locked(State(timeline: MovieTimeline(maxDuration: settings.maxRecordedDuration.map { UInt64($0.seconds * 1e9) })))
    }

    /// The file's name: its final one once published, else the one it is expected to get.
    var location: String { file.location }
    /// Where the muxer's file sink writes (the temporary name, a link to the same file once published).
    var writePath: String { file.temporary }
    /// The file's container (what its structure is read as while it is written).
    var container: MovieContainer { settings.container(for: file.requested) }

    /// Gives the file its final name as soon as it holds a whole video frame (MP4: its first
    /// fragment; read from the container's structure on disk, `MovieFileScan`), checked on a thread
    /// of its own every quarter second while the file grows: before
    /// that, a killed process leaves nothing under the final name (and an existing file it is to
    /// replace stays as it was).
    func publishWhenPlayable() {
        let thread = Thread { [weak self] in
            var checkedSize: Int64 = 0
            while let recording = self, recording.publishingEnds.wait(timeout: .now() + .milliseconds(250)) == .timedOut {
                guard recording.state.withLock({ $0.phase != .finished }), !recording.file.isPublished else { return }
                let size = recording.sizeOnDisk
                guard size > checkedSize else { continue }
                checkedSize = size
                guard MovieFileScan.holdsVideoFrame(recording.writePath, container: recording.container) else { continue }
                // A name that cannot be given now (the folder was made read-only, say) is tried again
                // when the recording finishes, and reported then if it still cannot.
                _ = try? recording.file.publish()
                return
            }
        }
        thread.name = "capture.movie-publisher"
        thread.start()
    }

    /// Ends the wait of `publishWhenPlayable` (the recording is finishing).
    func stopPublishing() { publishingEnds.signal() }

    var url: URL { URL(fileURLWithPath: location) }

    /// True once a stop was asked for (or the recording is finished): its branch leaves with the next
    /// change of the running graph, and it never comes back.
    var hasEnded: Bool { state.withLock { $0.phase == .stopping || $0.phase == .finished } }

    /// What the muxer hands the file sink (a probe on its sink pad): where each byte goes, and the end
    /// of the stream.
    func trackWrite(_ info: PadProbeInfo) {
        if let buffer = info.buffer {
            let size = Int64(buffer.size)
            state.withLock { state in
                state.writePosition += size
                state.expectedSize = max(state.expectedSize, state.writePosition)
            }
        } else if let start = info.segment?.byteStart {
            state.withLock { $0.writePosition = Int64(start) }
        } else if info.isEOS {
            state.withLock { $0.sawEOS = true }
        }
    }

    /// The file's size on disk now.
    var sizeOnDisk: Int64 {
        var info = stat()
        if stat(writePath, &info) == 0 { return Int64(info.st_size) }
        return file.isPublished && stat(location, &info) == 0 && file.isThisFile(location) ? Int64(info.st_size) : 0
    }

    /// What the file will weigh once finished if the recording stopped now: the encoded media plus
    /// the muxer's headers and indexes (estimated generously).
    static func estimatedFileSize(mediaBytes: Int64) -> Int64 {
        mediaBytes + 16 * 1024 + mediaBytes / 25
    }
}
