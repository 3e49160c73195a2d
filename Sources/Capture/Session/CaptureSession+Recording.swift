import Foundation

extension CaptureSession {
    // MARK: Recording commands

    /// Adds a recording's branch to the running graph: the owner's command behind
    /// `CaptureMovieFileOutput.startRecording`. Returns once the branch runs. Only that branch changes:
    /// it is described from the context the output was last applied with, and nothing else is compiled
    /// (settings of other outputs changed since the last commit wait for the next one).
    func startRecording(_ recording: MovieRecording, for output: CaptureMovieFileOutput) async throws(CaptureError) {
        try await queue.run { () async throws(CaptureError) in
            let (engine, configuration, graph, appliedContext) = self.state.withLock { state in
                (state.engine, state.applied, state.appliedGraph, state.appliedContexts[output.name])
            }
            guard let engine, let graph, configuration.outputs.contains(where: { $0 === output }) else {
                throw .notRunning(object: output.description)
            }
            guard var context = appliedContext else {
                throw .invalidMovieSettings(output: output.name, reason: "its connection is disabled, so it has nothing to record")
            }
            context.recording = RecordingRequest(recording: recording, branch: nil)
            guard let branch = try output.describeBranch(context) else {
                throw .invalidMovieSettings(output: output.name, reason: "it has no branch to record with")
            }
            var target = graph
            target.branches.removeAll { $0.output == output.name }
            target.branches.append(branch)
            // A recording that reads a stream's encoder changes how that encoder's queue behaves.
            target.branches = GraphCompiler.withSharedEncoders(target.branches)
            try await self.apply(
                target, on: engine, outputs: configuration.outputs,
                then: .recordingStarted(output: output.name, RecordingRequest(recording: recording, branch: branch), context: context, graph: target))
        }
    }

    /// Removes a recording's branch from the running graph, which finishes its file (the end of the
    /// stream goes through it first): the owner's command behind `stopRecording` and the limits. Only
    /// that branch changes.
    func stopRecording(for output: String) async {
        _ = try? await queue.run { () async throws(CaptureError) in
            let (engine, configuration, graph, request) = self.state.withLock { state in
                (state.engine, state.applied, state.appliedGraph, state.recordings[output])
            }
            guard request != nil else { return }
            guard let engine, var target = graph else {
                self.record(.recordingStopped(output: output, graph: nil))
                return
            }
            target.branches.removeAll { $0.output == output }
            // A shared encoder the recording was the last to read leaves with it.
            target.branches = GraphCompiler.withSharedEncoders(target.branches)
            // A failed drain is not rolled back: the recording has ended, its branch is not put back.
            try await self.apply(
                target, on: engine, outputs: configuration.outputs, rollingBack: false, then: .recordingStopped(output: output, graph: target))
        }
    }
}
