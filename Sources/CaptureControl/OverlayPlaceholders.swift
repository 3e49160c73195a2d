import Capture
import Foundation

/// The session state an overlay's text can show: `{flash-mode}`, `{camera}` and `{recording}` are
/// replaced by it (plain text replacement: nothing of the text is interpreted) and kept up to date by
/// the runner as the scenario (or a key press) changes that state, the way a camera app's buttons show
/// the current flash mode and camera.
public struct OverlayPlaceholders: Hashable, Sendable {
    /// The flash mode photos are taken with: `Auto`, `On`, `Off`.
    public var flashMode: FlashMode
    /// The camera in use: `Front`, `Rear` or `External` from its position, else the input's name.
    public var camera: String
    /// True while a movie output records (`{recording}` shows `REC`, else nothing).
    public var recording: Bool

    /// The placeholders a text may hold.
    public static let names = ["{flash-mode}", "{camera}", "{recording}"]

    /// The placeholders' values.
    /// - Parameters:
    ///   - flashMode: What `{flash-mode}` shows.
    ///   - camera: What `{camera}` shows.
    ///   - recording: Whether `{recording}` shows `REC`.
    public init(flashMode: FlashMode, camera: String, recording: Bool) {
        self.flashMode = flashMode
        self.camera = camera
        self.recording = recording
    }

    /// The state of a session: its first video input's camera, whether a movie output records, and
    /// `flashMode` (nil: the flash mode of the camera of the first photo output).
    public init(session: CaptureSession, flashMode: FlashMode? = nil) {
        let video = session.inputs.first { $0.mediaType == .video }
        switch video?.device.position {
        case .front?: camera = "Front"
        case .back?: camera = "Rear"
        case .external?: camera = "External"
        default: camera = video?.name ?? "No"
        }
        recording = session.outputs.contains { ($0 as? CaptureMovieFileOutput)?.isRecording ?? false }
        self.flashMode = flashMode ?? video?.device.flashMode ?? .off
    }

    /// True when `text` holds a placeholder.
    public static func appear(in text: String) -> Bool { names.contains { text.contains($0) } }

    /// `text` with each placeholder replaced.
    public func fill(_ text: String) -> String {
        guard Self.appear(in: text) else { return text }
        return text.replacingOccurrences(of: "{flash-mode}", with: flashMode.rawValue.capitalized)
            .replacingOccurrences(of: "{camera}", with: camera)
            .replacingOccurrences(of: "{recording}", with: recording ? "REC" : "")
    }
}
