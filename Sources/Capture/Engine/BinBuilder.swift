import GStreamer

/// Builds GStreamer bins from element specs: each element made by its factory, each property set
/// through the property's own type (a string property takes the value as it is, any other refuses a
/// value that is not of its type), chains linked pad to pad. Nothing is parsed as gst-launch text, so
/// no value of a user (a file name, a device path, a tag) can become part of a pipeline description;
/// the launch text of `capture compile` is a rendering of the same specs.
enum BinBuilder {
    /// A bin holding `chains`, linked: each chain's elements in order, its first element fed from the
    /// element named by `from` and its last linked into the one named by `into` (both in `chains`).
    static func bin(named name: String, chains: [Chain]) throws(GStreamerError) -> Bin {
        let bin = try Bin.empty(name: name)
        var made: [String: Element] = [:]
        for spec in chains.flatMap(\.elements) {
            let element = try element(spec)
            try bin.add(element)
            made[spec.name] = element
        }
        func named(_ name: String) throws(GStreamerError) -> Element {
            guard let element = made[name] else { throw .linkFailed(from: name, to: bin.name, reason: "no element of that name in the bin") }
            return element
        }
        for chain in chains {
            var previous = try chain.from.map { name throws(GStreamerError) in try named(name) }
            for spec in chain.elements {
                let element = try named(spec.name)
                if let previous { try link(previous, element) }
                previous = element
            }
            if let into = chain.into, let previous { try link(previous, try named(into)) }
        }
        return bin
    }

    /// One element with its properties (the live ones included).
    static func element(_ spec: ElementSpec) throws(GStreamerError) -> Element {
        let element = try Element.make(spec.factory, name: spec.name)
        for property in spec.properties + spec.liveProperties {
            try element.set(property.name, property.value)
        }
        return element
    }

    /// Links two elements; when the upstream one makes its outputs while running (a decoder's
    /// "sometimes" pads), the first new pad that fits is linked when it appears.
    static func link(_ upstream: Element, _ downstream: Element) throws(GStreamerError) {
        do {
            try upstream.link(to: downstream)
        } catch {
            guard upstream.hasSometimesSourcePads, let sink = downstream.staticPad("sink") else { throw error }
            upstream.onPadAdded { pad in
                guard !sink.isLinked else { return }
                // A pad of another kind (an audio stream beside the video) does not fit; it is left alone.
                try? pad.link(to: sink)
            }
        }
    }
}

extension CompiledGraph {
    /// The whole graph as chains of one bin: each source into its tee, each branch chain fed from its
    /// input's tee.
    var drawingChains: [Chain] {
        var chains = sources.map { Chain(input: nil, elements: $0.elements + [$0.tee]) }
        for branch in branches {
            for chain in branch.chains {
                var fed = chain
                if let input = chain.input, chain.from == nil { fed.from = "\(input)_tee" }
                // A shared encoder ends in the tee its readers are fed from.
                if branch.providesInput { fed.elements.append(ElementSpec("tee", name: "\(branch.output)_tee", [("allow-not-linked", "true")])) }
                chains.append(fed)
            }
        }
        return chains
    }

    /// The graph built (not run) and drawn in graphviz's dot language, for `capture compile --dot`.
    public func dot() throws(CaptureError) -> String {
        do {
            let pipeline = try Pipeline.make(name: "compiled")
            try pipeline.add(try BinBuilder.bin(named: "session", chains: drawingChains))
            return pipeline.dot()
        } catch {
            throw CaptureError(error, object: "the compiled graph")
        }
    }
}
