/// One H.264 encode that several branches read: a stream and a recording of the same size share it
/// (one encode, then a payloader for the stream and a muxer for the file).
///
/// It compiles to a branch of its own, named `name`: the video head (queue, conversion, scaling,
/// orientation), the output's overlays, a steady frame rate, the encoder, then a tee `NAME_tee` in
/// the pipeline. Branches that read it name it as the input of a chain, as they would name a camera.
/// The branch is in the graph for as long as a branch reads it: a stream can leave while a recording
/// made from its encoder goes on in the same file, and the recording's end leaves the stream alone.
///
/// ```
/// camera_tee. ! queue ! videoconvert ! videoscale ! video/x-raw,I420,640x480 ! overlaycomposition
///             ! videorate ! video/x-raw,framerate=30/1 ! x264enc ! tee name=live_h264_…_tee
/// live_h264_…_tee. ! queue ! h264parse ! video/x-h264,stream-format=byte-stream ! appsink     (the stream)
/// live_h264_…_tee. ! queue ! h264parse ! mp4mux ! filesink                                      (a recording)
/// ```
public struct SharedEncoder: Hashable, Sendable {
    /// The encoder branch's name (and the input name the branches that read it give their chain).
    public var name: String
    /// The video input it encodes.
    public var input: String
    /// The branch's elements from the queue to the encoder (the queue's `leaky` is set by the compiler
    /// from who reads it).
    public var elements: [ElementSpec]
    /// The encoder.
    public var encoder: H264Encoder
    /// Its bit rate, in bits per second.
    public var bitRate: Int
    /// The most frames between two key frames.
    public var keyInterval: Int
    /// The head's elements by role (names without the branch's prefix) and without the overlay
    /// element: what another output's head must equal to read this encoder instead of encoding again.
    var signature: [ElementSpec]

    /// The name of the tee the encoded frames leave by.
    public var teeName: String { "\(name)_tee" }

    /// The element names of the encoder branch, by role.
    var queueName: String { "\(name)_queue" }

    /// The encoder of an output named `owner`: `head` is its video head (from `BranchContext.videoHead`
    /// for an output named `name`, without overlays), `overlay` the overlay element drawn into the
    /// encoded frames (the owner's), `rate` the steady frame rate.
    init(
        owner: String, input: String, head: [ElementSpec], overlay: ElementSpec?, rate: FrameRate?, encoder: H264Encoder, bitRate: Int,
        keyInterval: Int
    ) {
        // The name carries a digest of what the encode is, so that an encoder a recording still reads
        // is never confused with a changed one its owner brings later. Not of the input: a camera
        // switch keeps the encoder (the new camera feeds the same tee).
        var steady: [ElementSpec] = []
        if let rate {
            steady.append(ElementSpec("videorate", name: "~_rate", [("skip-to-first", "true")]))
            steady.append(ElementSpec("capsfilter", name: "~_framerate", [("caps", "video/x-raw,framerate=\(rate.caps)")]))
        }
        let base = "\(owner)_h264"
        let signature = Self.signature(of: head, prefix: base) + steady
        let digest = Self.digest(signature.map(\.launchText) + [encoder.rawValue, "\(bitRate)", "\(keyInterval)"])
        let name = "\(base)_\(digest)"
        var elements = Self.renamed(head, from: base, to: name)
        if let overlay { elements.append(overlay) }
        elements += Self.renamed(steady, from: "~", to: name)
        elements.append(encoder.element(name: "\(name)_encode", bitRate: bitRate, keyInterval: keyInterval))
        self.name = name
        self.input = input
        self.elements = elements
        self.encoder = encoder
        self.bitRate = bitRate
        self.keyInterval = keyInterval
        self.signature = signature
    }

    /// The head of an output named `output` by role: its elements with the name prefix replaced by `~`,
    /// without the overlay element.
    static func signature(of head: [ElementSpec], prefix output: String) -> [ElementSpec] {
        renamed(head.filter { $0.factory != "overlaycomposition" }, from: output, to: "~")
    }

    /// True when an output whose video head (to the steady frame rate) has `signature` can record
    /// from this encoder: the same head, the same encoder, its bit rate when it asks for one, and a
    /// key frame at least as often as it needs one.
    func serves(signature other: [ElementSpec], encoder: H264Encoder, bitRate: Int?, keyInterval: Int) -> Bool {
        other == signature && encoder == self.encoder && (bitRate == nil || bitRate == self.bitRate) && self.keyInterval <= keyInterval
    }

    /// The encoder's branch; `forFiles`: a branch that writes a file reads it, so its queue never drops
    /// a frame (otherwise it drops the oldest, as a stream's head does, rather than hold the camera).
    func branch(forFiles: Bool) -> BranchSegment {
        var elements = self.elements
        if let index = elements.firstIndex(where: { $0.name == queueName }) {
            elements[index].liveProperties.removeAll { $0.name == "leaky" }
            elements[index].properties.removeAll { $0.name == "leaky" }
            elements[index].liveProperties.append(.init("leaky", forFiles ? "no" : "downstream"))
        }
        var segment = BranchSegment(output: name, kind: "encoder", chains: [Chain(input: input, elements: elements)])
        segment.providesInput = true
        return segment
    }

    /// The same encoder under another name (its elements renamed with it).
    func named(_ other: String) -> SharedEncoder {
        var copy = self
        copy.elements = Self.renamed(elements, from: name, to: other)
        copy.name = other
        return copy
    }

    /// The encoder reading `renamed[input]` instead of its input (a camera switch).
    func reading(_ renamed: [String: String]) -> SharedEncoder {
        var copy = self
        copy.input = renamed[input] ?? input
        return copy
    }

    private static func renamed(_ elements: [ElementSpec], from old: String, to new: String) -> [ElementSpec] {
        elements.map { element in
            var copy = element
            if copy.name.hasPrefix(old + "_") { copy.name = new + copy.name.dropFirst(old.count) }
            return copy
        }
    }

    /// FNV-1a of the texts, as 8 hex digits: the same in every process (element names stay the same
    /// from one `capture compile` to the next).
    static func digest(_ texts: [String]) -> String {
        var hash: UInt32 = 0x811c_9dc5
        for byte in texts.joined(separator: "\u{1}").utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }
}
