/// One change to a running pipeline. The executor applies a plan's edits in order; each keeps every
/// other part of the pipeline flowing.
enum Edit: Hashable, Sendable {
    /// Unlink the branch from its tees at an idle moment; when it writes a file, send the end of the
    /// stream through it and wait (bounded) for the file to be finished; then release it.
    case removeBranch(output: String, drain: Bool)
    /// Block the source's output, stop it and remove it with its tee.
    case removeSource(input: String)
    /// Stop the source alone and start the new one into the same tee: the branches stay linked.
    case restartSource(SourceSegment, reason: String)
    /// An input replaced by another of the same media in one block (a camera switch): the old source
    /// leaves its tee and the new one starts into it, so the branches it fed go on (a recording in the
    /// same file); the tee is the new input's from then on. If the new source does not start, the old
    /// one is put back.
    case swapSource(from: String, to: SourceSegment)
    /// The running device format still serves the input (a new output size that branches scale to):
    /// the device is not touched, only what the pipeline knows of the segment changes.
    case retargetSource(SourceSegment)
    case addSource(SourceSegment)
    /// Build the branch, sync it to the pipeline's state and link it to its tees behind blocking probes.
    case addBranch(BranchSegment)
    /// Set the changed live properties (capsfilter caps, rate limits) of a running branch in place.
    case updateBranch(BranchSegment)
}

/// The edits that turn a running graph into a target graph, and what they amount to for the user.
struct EditPlan: Equatable, Sendable {
    var edits: [Edit] = []
    var report = ConfigurationReport()
}

/// Turns (running graph, target graph) into edits. Pure: no GStreamer, no state; the table tests of
/// EditPlannerTests cover every kind of difference.
///
/// Order: branches leave first (a file-writing branch is finished while its inputs still feed it),
/// then inputs leave, restart or are swapped, new inputs come, and new branches are linked last
/// (their tees exist). An input that leaves while a new one of the same media comes in the same block
/// is a swap: paired in declaration order, the new source takes over the old one's tee, and a branch
/// that differs only by reading the new input stays linked.
/// A branch is rebuilt (removed, then added) when its structure changes — an element, a property that
/// is not live, an input — and updated in place when only live properties change. A source restarts
/// only when its own elements or device change; a new output size the running device format can still
/// serve by scaling is a retarget, which touches nothing that streams.
enum EditPlanner {
    static func plan(running: CompiledGraph, target: CompiledGraph) -> EditPlan {
        var plan = EditPlan()
        let oldSources = Dictionary(running.sources.map { ($0.input, $0) }, uniquingKeysWith: { first, _ in first })
        let newSources = Dictionary(target.sources.map { ($0.input, $0) }, uniquingKeysWith: { first, _ in first })
        let oldBranches = Dictionary(running.branches.map { ($0.output, $0) }, uniquingKeysWith: { first, _ in first })
        let newBranches = Dictionary(target.branches.map { ($0.output, $0) }, uniquingKeysWith: { first, _ in first })
        let swaps = pairSwaps(
            leaving: running.sources.filter { newSources[$0.input] == nil },
            coming: target.sources.filter { oldSources[$0.input] == nil })
        let renamed = Dictionary(swaps.map { ($0.from, $0.to.input) }, uniquingKeysWith: { first, _ in first })

        // 1. Branches that leave, whose structure changed, or that an input leaving fed. A shared
        //    encoder is an input to the branches that read it: it stays only if it stays the same, and
        //    it leaves after its readers (which leave with it).
        var removed = Set<String>()
        let encoders = running.branches.filter(\.providesInput).map { $0.reading(renamed) }
        var encoderStays: [String: Bool] = [:]
        for encoder in encoders {
            let next = newBranches[encoder.output]
            let inputGone = encoder.inputs.contains { newSources[$0] == nil }
            encoderStays[encoder.output] = next.map { !inputGone && $0.sameStructure(as: encoder) } ?? false
        }
        for original in running.branches where !original.providesInput {
            let branch = original.reading(renamed)
            let next = newBranches[branch.output]
            let inputGone = branch.inputs.contains { newSources[$0] == nil && encoderStays[$0] != true }
            let stays = next.map { !inputGone && $0.sameStructure(as: branch) } ?? false
            if !stays {
                plan.edits.append(.removeBranch(output: branch.output, drain: branch.drains))
                removed.insert(branch.output)
                if next == nil { plan.report.removedOutputs.append(branch.output) }
            }
        }
        for encoder in encoders where encoderStays[encoder.output] != true {
            plan.edits.append(.removeBranch(output: encoder.output, drain: false))
            removed.insert(encoder.output)
        }
        // 2. Inputs that leave or are swapped; inputs whose source changed restart alone.
        for source in running.sources {
            if let swap = swaps.first(where: { $0.from == source.input }) {
                plan.edits.append(.swapSource(from: source.input, to: swap.to))
                plan.report.removedInputs.append(source.input)
                plan.report.addedInputs.append(swap.to.input)
                plan.report.swappedInputs[source.input] = swap.to.input
                continue
            }
            guard let next = newSources[source.input] else {
                plan.edits.append(.removeSource(input: source.input))
                plan.report.removedInputs.append(source.input)
                continue
            }
            if next.elements != source.elements || next.device != source.device {
                let reason = restartReason(from: source, to: next)
                plan.edits.append(.restartSource(next, reason: reason))
                plan.report.restartedInputs[source.input] = reason
            } else if next != source {
                plan.edits.append(.retargetSource(next))
            }
        }
        // 3. New inputs.
        for source in target.sources where oldSources[source.input] == nil && !swaps.contains(where: { $0.to.input == source.input }) {
            plan.edits.append(.addSource(source))
            plan.report.addedInputs.append(source.input)
        }
        // 4. New and rebuilt branches (a shared encoder before its readers: the compiler puts it
        //    first), then in-place updates. Shared encoders are not outputs: the report leaves them out.
        for branch in target.branches {
            guard let previous = oldBranches[branch.output]?.reading(renamed), !removed.contains(branch.output) else {
                plan.edits.append(.addBranch(branch))
                if branch.providesInput {
                    // Not an output of the session.
                } else if oldBranches[branch.output] == nil {
                    plan.report.addedOutputs.append(branch.output)
                } else {
                    plan.report.updatedOutputs.append(branch.output)
                }
                continue
            }
            if previous != branch {
                plan.edits.append(.updateBranch(branch))
                if !branch.providesInput { plan.report.updatedOutputs.append(branch.output) }
            }
        }
        return plan
    }

    /// Inputs leaving and inputs coming of the same media, paired in order: each pair is a swap.
    static func pairSwaps(leaving: [SourceSegment], coming: [SourceSegment]) -> [(from: String, to: SourceSegment)] {
        var available = coming
        var swaps: [(from: String, to: SourceSegment)] = []
        for old in leaving {
            guard let index = available.firstIndex(where: { $0.media == old.media }) else { continue }
            swaps.append((old.input, available.remove(at: index)))
        }
        return swaps
    }

    /// Why a source restarts, for the `configuration-committed` event.
    static func restartReason(from old: SourceSegment, to new: SourceSegment) -> String {
        if old.device != new.device { return "device changed from \(old.device) to \(new.device)" }
        if old.format != new.format {
            return "device format changed from \(old.format.map(\.description) ?? "none") to \(new.format.map(\.description) ?? "none")"
        }
        return "source settings changed"
    }
}
