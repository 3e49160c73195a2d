import GStreamer

/// Finds which part of a session a bus message comes from, by the object that posted it: every
/// input's and output's bin is registered, and a message belongs to the bin it was posted within
/// (`gst_object_has_as_ancestor`, which walks up under the objects' locks). Element names play no part.
final class BusRouter: Sendable {
    private let parts = Locked<[ErrorMapper.Owner: Bin]>([:])

    func register(_ bin: Bin, for owner: ErrorMapper.Owner) { parts.withLock { $0[owner] = bin } }
    func unregister(_ owner: ErrorMapper.Owner) { _ = parts.withLock { $0.removeValue(forKey: owner) } }
    func removeAll() { parts.withLock { $0.removeAll() } }

    /// The input or output whose bin posted the message, or nil (the pipeline itself, a tee).
    func owner(of message: Message) -> ErrorMapper.Owner? {
        let registered = parts.withLock { Array($0) }
        return registered.first { message.isPosted(within: $0.value) }?.key
    }
}
