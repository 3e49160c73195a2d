import Foundation
import GStreamer

/// Learns how a recording of a `CaptureMovieFileOutput` goes, like `AVCaptureFileOutputRecordingDelegate`.
/// Called in order on the output's serial delegate queue. Only `didFinishRecordingTo` is required.
public protocol CaptureFileOutputRecordingDelegate: AnyObject, Sendable {
    /// The first frame is in the file; `firstTimestamp` is its session running time in seconds.
    func fileOutput(_ output: CaptureMovieFileOutput, didStartRecordingTo fileURL: URL, firstTimestamp: Double)
    /// The recording is paused: frames stop going into the file until it resumes.
    func fileOutput(_ output: CaptureMovieFileOutput, didPauseRecordingTo fileURL: URL)
    /// A paused recording goes on in the same file.
    func fileOutput(_ output: CaptureMovieFileOutput, didResumeRecordingTo fileURL: URL)
    /// The recording is stopping (`error`: the limit that stopped it, if one did); the file is being finished.
    func fileOutput(_ output: CaptureMovieFileOutput, willFinishRecordingTo fileURL: URL, error: CaptureError?)
    /// The file is finished (or could not be). `result.success` says whether it is complete and playable.
    func fileOutput(_ output: CaptureMovieFileOutput, didFinishRecordingTo fileURL: URL, result: MovieRecordingResult)
}

extension CaptureFileOutputRecordingDelegate {
    /// Does nothing by default.
    public func fileOutput(_ output: CaptureMovieFileOutput, didStartRecordingTo fileURL: URL, firstTimestamp: Double) {}
    /// Does nothing by default.
    public func fileOutput(_ output: CaptureMovieFileOutput, didPauseRecordingTo fileURL: URL) {}
    /// Does nothing by default.
    public func fileOutput(_ output: CaptureMovieFileOutput, didResumeRecordingTo fileURL: URL) {}
    /// Does nothing by default.
    public func fileOutput(_ output: CaptureMovieFileOutput, willFinishRecordingTo fileURL: URL, error: CaptureError?) {}
}
