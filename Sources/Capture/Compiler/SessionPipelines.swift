/// Every pipeline a session runs, in `gst-launch-1.0` terms: what `capture compile` prints.
///
/// A session runs more than its main graph: a movie output adds its branch (encoders, muxer, file)
/// only while it records, and a photo output encodes each shot in a small pipeline of its own, fed the
/// selected frame through `appsrc`. Both are compiled here from the same values that build them at run
/// time.
public struct SessionPipelines: Sendable {
    /// The session as it runs while no output records.
    public var session: CompiledGraph
    /// The session as it runs while every movie output records to its settings' location; nil when
    /// no movie output has a location to record to.
    public var whileRecording: CompiledGraph?
    /// The movie outputs `whileRecording` shows recording.
    public var recordingOutputs: [String]
    /// Movie outputs without a location in their settings (they record where `start-recording` says).
    public var outputsWithoutLocation: [String]
    /// The encoder pipeline of each photo output, for a shot with the output's default settings.
    public var photoEncoders: [PhotoEncoderPipeline]

    /// The pipeline a photo output encodes its shots in.
    public struct PhotoEncoderPipeline: Sendable, Hashable {
        /// The photo output's name.
        public var output: String
        /// The encoder in gst-launch syntax: `appsrc ! ... ! jpegenc ! jifmux ! appsink`.
        public var launchDescription: String
    }

    /// The fullest graph: the session while recording when there is one, else the session.
    public var fullest: CompiledGraph { whileRecording ?? session }

    /// The printed form: the session's command line first (runnable as it is), then each other
    /// pipeline after a `#` line saying when it runs. Lines starting with `#` are shell comments, so the
    /// whole text can be pasted into a shell.
    public var text: String {
        var lines = [session.gstLaunchCommand]
        if let whileRecording {
            let names = recordingOutputs.map { "'\($0)'" }.joined(separator: ", ")
            lines.append("# While movie output\(recordingOutputs.count == 1 ? "" : "s") \(names) record\(recordingOutputs.count == 1 ? "s" : ""): its branch joins the running session at start-recording and leaves, its file finished, at stop-recording.")
            lines.append(whileRecording.gstLaunchCommand)
        }
        for output in outputsWithoutLocation {
            lines.append("# Movie output '\(output)' has no location: its branch is compiled when start-recording names one.")
        }
        for encoder in photoEncoders {
            lines.append("# Photo output '\(encoder.output)' encodes each shot in a pipeline of its own, fed the captured frame through appsrc (not runnable alone; default shot settings):")
            lines.append("#   " + encoder.launchDescription)
        }
        return lines.joined(separator: "\n")
    }
}
