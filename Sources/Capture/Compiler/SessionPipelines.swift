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
    /// What each stream output's encoded frames feed (an RTSP server's media, a publishing pipeline).
    public var streams: [StreamPipeline] = []
    /// The file pipeline of each movie output with pre-roll.
    public var preRollRecorders: [PreRollPipeline] = []

    /// The pipeline a movie output with pre-roll writes its file with.
    public struct PreRollPipeline: Sendable, Hashable {
        /// The movie output's name.
        public var output: String
        /// How much encoded video it keeps before a recording starts.
        public var preRoll: Duration
        /// `appsrc ! MUXER ! filesink`, fed the ring and the live frames.
        public var launchDescription: String
    }

    /// The pipeline a stream output's encoded frames go to.
    public struct StreamPipeline: Sendable, Hashable {
        /// The stream output's name.
        public var output: String
        /// The stream's own pipeline in gst-launch syntax, fed through appsrc.
        public var launchDescription: String
    }

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
            lines.append(
                "# While movie output\(recordingOutputs.count == 1 ? "" : "s") \(names) record\(recordingOutputs.count == 1 ? "s" : ""): its branch joins the running session at start-recording and leaves, its file finished, at stop-recording."
            )
            lines.append(whileRecording.gstLaunchCommand)
        }
        for output in outputsWithoutLocation {
            lines.append("# Movie output '\(output)' has no location: its branch is compiled when start-recording names one.")
        }
        for encoder in photoEncoders {
            lines.append(
                "# Photo output '\(encoder.output)' encodes each shot in a pipeline of its own, fed the captured frame through appsrc (not runnable alone; default shot settings):"
            )
            lines.append("#   " + encoder.launchDescription)
        }
        for recorder in preRollRecorders {
            lines.append(
                "# Movie output '\(recorder.output)' has a pre-roll of \(recorder.preRoll.seconds) s: its branch (above, ending in an appsink) encodes all the time the session runs; a recording writes the last \(recorder.preRoll.seconds) s, then the live frames, through a pipeline of its own (not runnable alone):"
            )
            lines.append("#   " + recorder.launchDescription)
        }
        for stream in streams {
            lines.append("# Stream output '\(stream.output)' hands its encoded frames (appsink) to a pipeline of its own (not runnable alone):")
            lines.append("#   " + stream.launchDescription)
        }
        return lines.joined(separator: "\n")
    }
}
