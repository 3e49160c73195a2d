extension CaptureSession {
    /// Makes a configuration change and returns once it is applied: on a running session as a
    /// configuration block of its own (`beginConfiguration`, `change`, `commitConfiguration`: the live
    /// pipeline is edited before this returns), on a stopped one as a plain change (applied when it
    /// starts). When `change` throws, the block is cancelled (`cancelConfiguration()`: nothing of it is
    /// applied) and the error is rethrown. While
    /// another task holds a block open, this block nests in it: the change is applied at that task's
    /// commit (see ``CaptureSession/beginConfiguration()``).
    public func applyChange(_ change: () throws(CaptureError) -> Void) async throws(CaptureError) {
        guard isRunning else {
            try change()
            return
        }
        beginConfiguration()
        do {
            try change()
        } catch {
            try? cancelConfiguration()
            throw error
        }
        try await commitConfiguration()
    }
}
