/// What the graph compiler knows of the machine and its devices, handed to it as an input: the H.264
/// encoder choice and which devices the session controls. `GraphCompiler.compile` reads nothing else
/// of the process (no singleton), so a compilation depends only on its arguments, and a test compiles
/// against any machine it describes.
///
/// Callers gather it before they take a lock (`current`): the first gathering in a process runs the
/// encoder trials (`H264EncoderSelection.current`, up to 5 s per hardware encoder).
struct CompileEnvironment: Sendable {
    /// The encoder `.automatic` resolves to, and the encoders installed (for those named).
    var encoders: H264EncoderSelection
    /// True for a device whose controls act in the session: its source gets the zoom stages (and, for
    /// the test pattern, the stages that simulate its controls).
    var isControllable: @Sendable (CaptureDevice) -> Bool

    /// This process's environment: the encoder choice made here (tried once, then remembered) and the
    /// device control hub's rule of which devices it controls.
    static var current: CompileEnvironment {
        CompileEnvironment(encoders: .current, isControllable: { DeviceControlHub.shared.isControllable($0) })
    }
}
