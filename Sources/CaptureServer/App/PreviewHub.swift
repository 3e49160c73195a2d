import Capture
import Foundation

/// The viewers of one kind of web preview, and the session output that feeds them: the output is added
/// to the running session (`beginConfiguration`/`addOutput`/`commitConfiguration`, a live edit that
/// touches no other branch) when the first viewer comes, and removed when the last one leaves. Changes
/// are applied one at a time, in a loop that always moves the session towards what the viewers want
/// now, so viewers coming and going quickly never race two edits.
final class PreviewHub<Output: CaptureOutput>: Sendable {
    private struct State {
        var viewers = 0
        var output: Output?
        var reconciling = false
        var dirty = false
        var lastError: String?
    }
    private let state = Locked(State())
    private let session: @Sendable () -> CaptureSession?
    private let make: @Sendable () -> Output

    /// - Parameters:
    ///   - session: the session to add the output to (nil while there is none).
    ///   - make: a new output, each time one is added.
    init(session: @escaping @Sendable () -> CaptureSession?, make: @escaping @Sendable () -> Output) {
        self.session = session
        self.make = make
    }

    /// The output while it is part of the session.
    var output: Output? { state.withLock { $0.output } }
    var viewerCount: Int { state.withLock { $0.viewers } }
    /// Why the output could not be added, the last time it failed.
    var lastError: String? { state.withLock { $0.lastError } }

    func viewerCame() {
        state.withLock { $0.viewers += 1 }
        reconcile()
    }

    func viewerLeft() {
        state.withLock { $0.viewers = max(0, $0.viewers - 1) }
        reconcile()
    }

    /// Applies what the viewers want, now and after every change, one edit at a time.
    private func reconcile() {
        let start = state.withLock { state -> Bool in
            state.dirty = true
            guard !state.reconciling else { return false }
            state.reconciling = true
            return true
        }
        guard start else { return }
        // A viewer's request starts it: the edit's synchronous part (compiling, gathering the encoder
        // choice) runs on a thread of its own, not on the cooperative pool.
        startOnOwnThread(named: "capture.viewers") { await self.reconcileLoop() }
    }

    private func reconcileLoop() async {
        while true {
            let step = state.withLock { state -> (want: Bool, have: Output?)? in
                guard state.dirty else {
                    state.reconciling = false
                    return nil
                }
                state.dirty = false
                return (state.viewers > 0, state.output)
            }
            guard let step else { return }
            guard let session = session() else { continue }
            if step.want, step.have == nil {
                let output = make()
                do throws(CaptureError) {
                    try await session.applyChange { () throws(CaptureError) in try session.addOutput(output) }
                    state.withLock {
                        $0.output = output
                        $0.lastError = nil
                    }
                } catch {
                    state.withLock { $0.lastError = error.description }
                }
            } else if !step.want, let output = step.have {
                state.withLock { $0.output = nil }
                try? await session.applyChange { () throws(CaptureError) in try session.removeOutput(output) }
            }
        }
    }
}
