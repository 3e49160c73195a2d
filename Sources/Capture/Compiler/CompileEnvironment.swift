/// What the graph compiler knows of the machine and its devices, handed to it as an input: the H.264
/// encoder choice and which devices the session controls. `GraphCompiler.compile` reads nothing else
/// of the process (no singleton), so a compilation depends only on its arguments, and a test compiles
/// against any machine it describes.
///
/// Callers gather it before they take a lock (`current`): the first gathering in a process runs the
/// encoder trials (`H264EncoderSelection.current`, up to 5 s per hardware encoder).
struct CompileEnvironment: Sendable {
    /// The encoder choice, when it was gathered (see `current(for:)`).
    private var gathered: H264EncoderSelection?

    /// The encoder `.automatic` resolves to, and the encoders installed (for those named). Read from
    /// an environment gathered for outputs that encode no H.264 (a photo session), it is gathered
    /// then: only a configuration changed meanwhile on another task can ask for it that way.
    var encoders: H264EncoderSelection {
        get { gathered ?? .current }
        set { gathered = newValue }
    }

    /// True for a device whose controls act in the session: its source gets the zoom stages (and, for
    /// the test pattern, the stages that simulate its controls).
    var isControllable: @Sendable (CaptureDevice) -> Bool

    init(encoders: H264EncoderSelection?, isControllable: @escaping @Sendable (CaptureDevice) -> Bool) {
        gathered = encoders
        self.isControllable = isControllable
    }

    /// This process's environment: the encoder choice made here (tried once, then remembered) and the
    /// device control hub's rule of which devices it controls.
    static var current: CompileEnvironment {
        CompileEnvironment(encoders: .current, isControllable: { DeviceControlHub.shared.isControllable($0) })
    }

    /// This process's environment for a configuration with `outputs`: the encoder choice is gathered
    /// only when one of them may encode H.264 (a movie or a stream output), so a photo or preview
    /// session never runs the hardware encoders' trial encodes.
    static func current(for outputs: [CaptureOutput]) -> CompileEnvironment {
        let encodes = outputs.contains { $0 is CaptureMovieFileOutput || $0 is CaptureStreamOutput }
        return CompileEnvironment(encoders: encodes ? .current : nil, isControllable: { DeviceControlHub.shared.isControllable($0) })
    }
}
