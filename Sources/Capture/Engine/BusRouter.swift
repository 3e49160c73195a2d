import GStreamer

/// Finds which part of a session a bus message comes from, by the object that posted it: every
/// input's and output's bin is registered, and a message belongs to the bin it was posted within
/// (`gst_object_has_as_ancestor`, which walks up under the objects' locks). Element names play no part.
final class BusRouter: Sendable {
    private struct Part {
        var bin: Bin
        /// The output the branch serves, held weakly (nil for an input's bin).
        weak var output: CaptureOutput?
    }
    private let parts = Locked<[ErrorMapper.Owner: Part]>([:])

    /// Registers `bin` for `owner`; an output's branch also names its output, which answers what its
    /// elements ask for while the branch is still being added (`output(of:)`).
    func register(_ bin: Bin, for owner: ErrorMapper.Owner, output: CaptureOutput? = nil) {
        parts.withLock { $0[owner] = Part(bin: bin, output: output) }
    }
    func unregister(_ owner: ErrorMapper.Owner) { _ = parts.withLock { $0.removeValue(forKey: owner) } }
    func removeAll() { parts.withLock { $0.removeAll() } }

    /// The input or output whose bin posted the message, or nil (the pipeline itself, a tee).
    func owner(of message: Message) -> ErrorMapper.Owner? {
        let registered = parts.withLock { $0.map { ($0.key, $0.value.bin) } }
        return registered.first { message.isPosted(within: $0.1) }?.0
    }

    /// The output whose branch posted the message, from the moment its bin was registered (before the
    /// branch changes state: an element asking for a context as it goes to READY is answered).
    func output(of message: Message) -> CaptureOutput? {
        let registered = parts.withLock { Array($0.values) }
        return registered.first { message.isPosted(within: $0.bin) }?.output
    }
}
