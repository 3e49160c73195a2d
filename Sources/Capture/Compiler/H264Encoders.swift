import Foundation
import GStreamer

/// The H.264 encoders Capture knows, hardware first.
public enum H264Encoder: String, CaseIterable, Sendable, CustomStringConvertible {
    /// VA-API through GStreamer's `va` plugin (Intel, AMD).
    case vah264enc
    /// VA-API through the older `vaapi` plugin.
    case vaapih264enc
    /// A V4L2 memory-to-memory encoder (Raspberry Pi, many ARM boards).
    case v4l2h264enc
    /// x264 in software (the default when no hardware encoder works).
    case x264enc
    /// OpenH264 in software (Cisco's), when x264 is not installed.
    case openh264enc

    /// True for the encoders that run on a GPU or a codec block (VA-API, V4L2 memory-to-memory).
    public var isHardware: Bool { self != .x264enc && self != .openh264enc }

    /// The encoder's GStreamer factory name (`x264enc`).
    public var description: String { rawValue }

    /// The raw format the encoder is fed.
    var inputFormat: String { isHardware ? "NV12" : "I420" }

    /// The encoder tuned for live use: about `bitRate` bits per second, a key frame at least every
    /// `keyInterval` frames, no frame held back (no B-frames).
    func element(name: String, bitRate: Int, keyInterval: Int) -> ElementSpec {
        let kilobits = "\(max(1, bitRate / 1000))"
        switch self {
        case .x264enc:
            return ElementSpec(
                "x264enc", name: name,
                [
                    ("speed-preset", "veryfast"), ("tune", "zerolatency"), ("bitrate", kilobits),
                    ("key-int-max", "\(keyInterval)"),
                ])
        case .openh264enc:
            return ElementSpec(
                "openh264enc", name: name,
                [
                    ("bitrate", "\(bitRate)"), ("gop-size", "\(keyInterval)"), ("complexity", "low"),
                    ("usage-type", "camera"),
                ])
        case .vah264enc:
            return ElementSpec("vah264enc", name: name, [("bitrate", kilobits), ("key-int-max", "\(keyInterval)"), ("b-frames", "0")])
        case .vaapih264enc:
            return ElementSpec("vaapih264enc", name: name, [("bitrate", kilobits), ("keyframe-period", "\(keyInterval)"), ("max-bframes", "0")])
        case .v4l2h264enc:
            return ElementSpec("v4l2h264enc", name: name, [("extra-controls", "controls,video_bitrate=\(bitRate),h264_i_frame_period=\(keyInterval)")])
        }
    }
}

/// Which H.264 encoder a branch uses: the best that works (`automatic`), or one named.
public enum H264EncoderPreference: Hashable, Sendable, CustomStringConvertible {
    /// The first encoder of `H264EncoderSelection`'s order that is installed and passes its trial encode.
    case automatic
    /// This encoder, or `elementMissing` when it is not installed.
    case named(H264Encoder)

    /// `auto` or an encoder's factory name; nil for anything else.
    public init?(_ text: String) {
        if text == "auto" { self = .automatic } else if let encoder = H264Encoder(rawValue: text) { self = .named(encoder) } else { return nil }
    }

    /// `auto` or the encoder's factory name, as `encoder=` and `--encoder` take it.
    public var description: String {
        switch self {
        case .automatic: "auto"
        case .named(let encoder): encoder.rawValue
        }
    }
}

/// The choice of H.264 encoder, made once per process: each hardware encoder that is installed is
/// tried with a one-frame encode (`videotestsrc num-buffers=1 ! ... ! ENCODER ! fakesink`, which must
/// end with an H.264 buffer and the end of the stream within 5 s); the first that works is used, else
/// x264enc, else openh264enc.
public struct H264EncoderSelection: Sendable, CustomStringConvertible {
    /// The encoder chosen; nil when no H.264 encoder is installed.
    public var encoder: H264Encoder?
    /// What each candidate gave, in order: "not installed", "works", or why its trial failed.
    public var findings: [(encoder: H264Encoder, finding: String)]

    /// `x264enc (software; vah264enc: not installed, ...)`.
    public var description: String {
        guard let encoder else { return "none (no H.264 encoder is installed: install gstreamer1.0-plugins-ugly for x264enc)" }
        let hardware = findings.filter { $0.encoder.isHardware }.map { "\($0.encoder): \($0.finding)" }.joined(separator: ", ")
        return "\(encoder) (\(encoder.isHardware ? "hardware" : "software"); \(hardware))"
    }

    /// The encoders installed here (found in GStreamer's registry), whether their trial worked or not.
    public var installed: Set<H264Encoder>

    /// A choice as given: `encoder` for `.automatic`, `installed` for the encoders named.
    init(encoder: H264Encoder?, installed: Set<H264Encoder>, findings: [(encoder: H264Encoder, finding: String)] = []) {
        self.encoder = encoder
        self.installed = installed
        self.findings = findings
    }

    private static let cached = ComputedOnce<H264EncoderSelection>()

    /// The process's choice: tried once, on the first caller's thread and under no lock, then
    /// remembered; callers that come while the trials run wait for their result. Callers gather it
    /// before taking a lock of theirs (`CompileEnvironment.current`).
    public static var current: H264EncoderSelection {
        // A choice made without GStreamer is not remembered.
        cached.value(make) { made in !(made.encoder == nil && made.findings.first?.finding.hasPrefix("GStreamer did not start") == true) }
    }

    static func make() -> H264EncoderSelection {
        // The registry must be loaded before anything is looked up in it.
        do { try GStreamer.initialize() } catch {
            return H264EncoderSelection(
                encoder: nil, installed: [], findings: H264Encoder.allCases.map { ($0, "GStreamer did not start: \(error.description)") })
        }
        var findings: [(H264Encoder, String)] = []
        var chosen: H264Encoder?
        var installed = Set<H264Encoder>()
        for encoder in H264Encoder.allCases {
            guard GStreamer.hasElement(encoder.rawValue) else {
                findings.append((encoder, "not installed"))
                continue
            }
            installed.insert(encoder)
            if encoder.isHardware {
                let failure = trialEncode(encoder.rawValue, format: encoder.inputFormat)
                findings.append((encoder, failure.map { "trial encode failed: \($0)" } ?? "works"))
                if failure == nil && chosen == nil { chosen = encoder }
            } else {
                findings.append((encoder, "installed"))
                if chosen == nil { chosen = encoder }
            }
        }
        return H264EncoderSelection(encoder: chosen, installed: installed, findings: findings)
    }

    /// The encoder for `preference`, from this choice alone (nothing is looked up). Typed error:
    /// `elementMissing` (the named one, or any, is not installed).
    func resolve(_ preference: H264EncoderPreference, neededBy object: String) throws(CaptureError) -> H264Encoder {
        switch preference {
        case .named(let encoder):
            guard installed.contains(encoder) else { throw .elementMissing(factory: encoder.rawValue, neededBy: object) }
            return encoder
        case .automatic:
            guard let encoder else { throw .elementMissing(factory: "x264enc", neededBy: object) }
            return encoder
        }
    }

    /// Encodes one 320x240 frame with `factory`; nil when an H.264 buffer and the end of the stream came,
    /// else why not.
    static func trialEncode(_ factory: String, format: String, timeout: Duration = .seconds(5)) -> String? {
        do throws(GStreamerError) {
            let pipeline = try Pipeline.make(name: "capture-encoder-trial")
            let source = try Element.make("videotestsrc")
            try source.set("num-buffers", "1")
            let raw = try Element.make("capsfilter")
            try raw.set("caps", "video/x-raw,format=\(format),width=320,height=240,framerate=30/1")
            let encoder = try Element.make(factory)
            let sink = try Element.make("fakesink")
            for element in [source, raw, encoder, sink] { try pipeline.add(element) }
            try source.link(to: raw)
            try raw.link(to: encoder)
            try encoder.link(to: sink)
            let outcome = Locked<String?>(nil)
            let encoded = Locked(false)
            let done = DispatchSemaphore(value: 0)
            sink.staticPad("sink")?.addProbe(.buffer) { pad, _ in
                if pad.currentCaps?.structures.first?.name == "video/x-h264" { encoded.value = true }
                return .ok
            }
            pipeline.bus.setSyncHandler { message in
                switch message.kind {
                case .eos:
                    outcome.withLock { if $0 == nil { $0 = "" } }
                    done.signal()
                case .error:
                    outcome.withLock { if $0 == nil { $0 = message.error?.message ?? "an error" } }
                    done.signal()
                default:
                    break
                }
            }
            defer {
                pipeline.bus.setFlushing(true)
                pipeline.bus.removeSyncHandler()
                _ = try? pipeline.setState(.null)
            }
            _ = try pipeline.setState(.playing)
            guard done.wait(timeout: .now() + timeout.seconds) == .success else { return "no frame within \(timeout.seconds) s" }
            if let error = outcome.value, !error.isEmpty { return error }
            return encoded.value ? nil : "it made no H.264"
        } catch {
            return error.description
        }
    }
}
