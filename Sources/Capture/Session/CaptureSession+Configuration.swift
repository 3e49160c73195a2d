import Foundation

extension CaptureSession {

    /// Applies an edit: inside a configuration block to the pending configuration; outside, validated
    /// at once and, on a running session, applied to the live pipeline in the background (failures
    /// are posted as `runtime-error`). `checking` sees the configuration the edit changes (the
    /// pending one inside a block) and throws to refuse it; nothing else changes the configuration
    /// between the check and the edit. `done` (told whether the edit waits in a block) and `failed`
    /// run under the same lock, after the edit or its refusal. The live edit is queued under the
    /// lock too, so the pipeline follows commits in the order they were made.
    func edit(
        checking check: (SessionConfiguration) throws(CaptureError) -> Void = { _ in },
        done: (_ inBlock: Bool) -> Void = { _ in },
        failed: () -> Void = {},
        _ change: (inout SessionConfiguration) -> Void
    ) throws(CaptureError) {
        enum Next { case pending, offline(SessionConfiguration), live(SessionConfiguration) }
        // Before the lock: gathering the encoder choice may run trial encodes (once per process).
        var changed = configuration
        change(&changed)
        let environment = CompileEnvironment.current(for: changed.outputs)
        try configurationLock.withLock { _ throws(CaptureError) in
            do throws(CaptureError) {
                try check(configuration)
                let next: Next = state.withLock { state in
                    if var pending = state.pending {
                        change(&pending)
                        state.pending = pending
                        return .pending
                    }
                    var copy = state.committed
                    change(&copy)
                    return state.lifecycle.isRunning ? .live(copy) : .offline(copy)
                }
                switch next {
                case .pending:
                    break
                case .offline(let candidate):
                    _ = try GraphCompiler.compile(candidate, environment: environment)
                    commit(candidate)
                case .live(let candidate):
                    let compiled = try compileForRunningGraph(candidate, environment: environment)
                    // Reads and later edits see the change at once; the pipeline follows in order.
                    let serial = commit(candidate)
                    queue.submit {
                        do throws(CaptureError) { try await self.applyLive(candidate, serial: serial, compiled: compiled) } catch {
                            self.post(.runtimeError(error))
                        }
                    }
                }
                if case .pending = next { done(true) } else { done(false) }
            } catch {
                failed()
                throw error
            }
        }
    }

    // MARK: Configuration blocks

    /// Starts a configuration block; blocks nest. Nothing changes until the outermost commit.
    ///
    /// The block is the session's, as in AVFoundation, not the calling task's: blocks begun on several
    /// tasks at once nest into one, and every change made in them is applied (or refused) together at
    /// the outermost commit, whichever task makes it. An inner commit returns at once.
    public func beginConfiguration() {
        configurationLock.withLock { _ in
            state.withLock { state in
                let start = state.pending ?? state.committed
                state.pending = start
                state.blockStarts.append(start)
            }
        }
    }

    /// Ends a configuration block without applying it: every change made in it since its
    /// `beginConfiguration()` is dropped, and the session stays as it was (on a running session nothing
    /// of the pipeline is touched). An inner block goes back to where the outer block was when it began;
    /// the outer block goes on. Outputs the dropped changes added may join another session again.
    ///
    /// AVFoundation has no way back from `beginConfiguration()`; this is what an app does when a change
    /// of a block fails halfway (recipe 9-7's microphone that is not there: the still output was
    /// already removed) and it wants the session as it was, not half of the block.
    /// - Throws: `commitWithoutBegin` when no block is open.
    public func cancelConfiguration() throws(CaptureError) {
        let (dropped, kept) = try configurationLock.withLock { _ throws(CaptureError) in
            try state.withLock { state throws(CaptureError) -> ([CaptureOutput], SessionConfiguration) in
                guard let start = state.blockStarts.popLast() else { throw .commitWithoutBegin }
                let dropped = (state.pending ?? start).outputs.filter { output in !start.outputs.contains { $0 === output } }
                state.pending = state.blockStarts.isEmpty ? nil : start
                return (dropped, state.pending ?? state.committed)
            }
        }
        for output in dropped where !kept.outputs.contains(where: { $0 === output }) {
            output.ownerState.withLock { owner in if owner.id == ObjectIdentifier(self) { owner = WeakSession(nil) } }
        }
    }

    /// Ends a configuration block. At the outermost commit the whole block is validated and applied
    /// atomically (on a running session, as live edits of the pipeline), or rejected as a whole.
    public func commitConfiguration() async throws(CaptureError) {
        enum Step { case inner, offline, live(Task<Result<Void, CaptureError>, Never>) }
        // The block's configuration, checked, made `committed` and (on a running session) queued
        // before a block begun meanwhile reads it or a later commit is queued.
        var previous = SessionConfiguration()
        var candidate = SessionConfiguration()
        let environment = CompileEnvironment.current(for: configuration.outputs)  // before the lock (see edit)
        do {
            let step: Step = try configurationLock.withLock { _ throws(CaptureError) -> Step in
                let taken = try state.withLock { state throws(CaptureError) -> (SessionConfiguration, SessionConfiguration, running: Bool)? in
                    guard state.blockStarts.popLast() != nil else { throw .commitWithoutBegin }
                    if state.depth > 0 { return nil }
                    defer { state.pending = nil }
                    return (state.committed, state.pending ?? state.committed, state.lifecycle.isRunning)
                }
                guard let taken else { return .inner }
                (previous, candidate) = (taken.0, taken.1)
                if taken.running {
                    let compiled = try compileForRunningGraph(candidate, environment: environment)
                    let serial = commit(candidate)
                    let applying = candidate
                    return .live(queue.enqueue { () async throws(CaptureError) in try await self.applyLive(applying, serial: serial, compiled: compiled) })
                }
                _ = try GraphCompiler.compile(candidate, environment: environment)
                commit(candidate)
                return .offline
            }
            switch step {
            case .inner:
                return
            case .offline:
                post(.configurationCommitted(ConfigurationReport(offline: true)))
            case .live(let applying):
                try await applying.value.get()
            }
            // Outputs that left the session may join another one.
            releaseOutputs(previous.outputs.filter { output in !candidate.outputs.contains { $0 === output } })
        } catch {
            // Outputs the refused block added are free again.
            releaseOutputs(candidate.outputs.filter { output in !previous.outputs.contains { $0 === output } })
            throw error
        }
    }

    /// Frees outputs for other sessions, those of them that are not in the session's configuration
    /// now (a later change may have added one again).
    private func releaseOutputs(_ outputs: [CaptureOutput]) {
        guard !outputs.isEmpty else { return }
        configurationLock.withLock { _ in
            let current = configuration
            for output in outputs where !current.outputs.contains(where: { $0 === output }) {
                output.ownerState.value = WeakSession(nil)
            }
        }
    }

    /// A compilation of `configuration` against the running graph (its device formats and
    /// recordings), and the generation it was made at.
    private func compileForRunningGraph(
        _ configuration: SessionConfiguration, environment: CompileEnvironment
    ) throws(CaptureError) -> (Compilation, generation: Int) {
        let (formats, recordings, generation, streaming) = state.withLock {
            ($0.engine?.runningFormats ?? [:], $0.recordings, $0.generation, $0.streamingSources)
        }
        return (
            try GraphCompiler.compile(configuration, environment: environment, recordings: recordings, running: formats, streaming: streaming),
            generation
        )
    }

    /// Makes `candidate` the committed configuration; returns its serial.
    @discardableResult
    private func commit(_ candidate: SessionConfiguration) -> Int {
        state.withLock { state in
            state.committed = candidate
            state.commitSerial += 1
            return state.commitSerial
        }
    }

    /// Applies a configuration to the running pipeline. Runs on the command queue. `compiled` is used
    /// when nothing changed the running graph since it was made (a commit compiles once); otherwise the
    /// configuration is compiled again against what runs now. On any failure the session keeps running
    /// as it was, and `committed` goes back to what runs unless a later change is queued (`serial`).
    func applyLive(_ candidate: SessionConfiguration, serial: Int, compiled: (Compilation, generation: Int)? = nil) async throws(CaptureError) {
        guard let engine = state.withLock({ $0.engine }) else { return }  // stopped meanwhile: applies at the next start
        let (formats, recordings, generation, streaming) = state.withLock {
            ($0.engine?.runningFormats ?? [:], $0.recordings, $0.generation, $0.streamingSources)
        }
        do throws(CaptureError) {
            let compilation: Compilation
            if let compiled, compiled.generation == generation, compiled.0.runningFormats == formats {
                compilation = compiled.0
            } else {
                compilation = try GraphCompiler.compile(
                    candidate, environment: .current(for: candidate.outputs), recordings: recordings, running: formats, streaming: streaming)
            }
            try Self.prepare(candidate.outputs, for: compilation.graph)
            let report = try await apply(compilation.graph, on: engine, outputs: candidate.outputs, then: .configuration(candidate, compilation))
            post(.configurationCommitted(report))
        } catch {
            state.withLock { state in
                if state.commitSerial == serial { state.committed = state.applied }
            }
            throw error
        }
    }

    /// The one apply path of the owner: applies `target` on the engine, then records what runs
    /// (`OwnerState.record`: graph, contexts, recordings, generation), and after a configuration tells
    /// every output the context its branch runs with. When the apply fails and `rollingBack`, the graph
    /// that ran before is put back, so the session keeps running as it was (a recording the failed edit
    /// finished does not come back: its file is complete), and the error is thrown.
    @discardableResult
    func apply(
        _ target: CompiledGraph, on engine: any PipelineEngine, outputs: [CaptureOutput], rollingBack: Bool = true,
        then change: AppliedChange
    ) async throws(CaptureError) -> ConfigurationReport {
        let report: ConfigurationReport
        do throws(CaptureError) {
            report = try await engine.apply(target, outputs: Self.byName(outputs))
        } catch {
            if rollingBack {
                let (previous, graph) = record(.rollBack)
                if let graph { _ = try? await engine.apply(graph, outputs: Self.byName(previous.outputs)) }
            }
            throw error
        }
        record(change)
        return report
    }

    /// The owner's books follow what runs (`OwnerState.record`, under the lock), and after a
    /// configuration every output is told the context its branch runs with. Every change of what runs
    /// goes through here: a start, an apply, a roll-back, a stop.
    @discardableResult
    func record(_ change: AppliedChange) -> (configuration: SessionConfiguration, graph: CompiledGraph?) {
        let now = state.withLock { $0.record(change) }
        if case .configuration(let configuration, let compilation) = change {
            for output in configuration.outputs { output.configurationApplied(compilation.contexts[output.name]) }
        }
        return now
    }

    /// Lets each output with a branch in `graph` make what it needs outside the pipeline.
    static func prepare(_ outputs: [CaptureOutput], for graph: CompiledGraph) throws(CaptureError) {
        for output in outputs where graph.branches.contains(where: { $0.output == output.name }) {
            try output.prepareToRun()
        }
    }

    static func byName(_ outputs: [CaptureOutput]) -> [String: CaptureOutput] {
        Dictionary(outputs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
