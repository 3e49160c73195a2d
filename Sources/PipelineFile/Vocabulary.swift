import Capture
import Foundation

// The words of the `.pipeline` format. Each enum's raw values are the spellings of the file. Where
// Capture has the type, the format uses Capture's (SessionPreset, MediaType, PreviewSink, PhotoCodec,
// FlashMode, NormalizedRect, MovieContainer, MovieVideoCodec, MovieAudioCodec, and for
// `configure-device` FocusMode, ExposureMode, WhiteBalanceMode, TorchMode); the enums below are the
// ones Capture does not have.

/// What an `output` statement declares (`kind=`).
public enum OutputKind: String, Sendable, CaseIterable, Hashable {
    /// The kinds, spelled as `kind=` takes them: `photo` (a photo output), `movie` (a movie file
    /// output), `metadata` (a machine-readable code output), `frames` (video frames handed to the app),
    /// `preview` (a preview output), `stream` (an RTSP or SRT stream).
    case photo, movie, metadata, frames, preview, stream
}

/// The symbologies a metadata output can detect (`types=`): Capture's own list.
public typealias BarcodeType = MetadataObjectType

/// `backend=` of a metadata output: Capture's own choice.
public typealias MetadataBackend = CaptureMetadataOutput.Backend

/// `delivery=` of a metadata output: once per appearance, or every frame as on iOS.
public typealias MetadataDelivery = CaptureMetadataOutput.Delivery

enum Vocabulary {
    /// Declarations, in the order the documentation lists them.
    static let declarations = ["session", "input", "output", "overlay"]
    /// Actions, in the order the documentation lists them.
    static let actions = [
        "start", "stop", "wait", "capture-photo", "start-recording", "stop-recording", "pause-recording",
        "resume-recording", "begin-configuration", "commit-configuration", "add-input", "add-output",
        "remove-input", "remove-output", "set-preset", "configure-device", "add-overlay", "set-overlay", "remove-overlay", "toggle-flash", "switch-camera",
        "trim-video", "generate-thumbnail", "pick-from-library", "expect", "repeat",
    ]
    static let statements = declarations + actions

    /// The videotestsrc pattern nicks (GStreamer 1.22).
    static let testPatterns = [
        "smpte", "snow", "black", "white", "red", "green", "blue", "checkers-1", "checkers-2", "checkers-4",
        "checkers-8", "circular", "blink", "smpte75", "zone-plate", "gamut", "chroma-zone-plate", "solid-color",
        "ball", "smpte100", "bar", "pinwheel", "spokes", "gradient", "colors", "smpte-rp-219",
    ]

    /// Events that `wait` and `expect` can name: the contract's, Capture's `frame-saved`, and the
    /// runner's `action-failed`.
    static let events = [
        "session-started", "session-stopped", "configuration-committed", "runtime-error", "interrupted",
        "interruption-ended", "resumed", "device-connected", "device-disconnected", "photo-captured", "photo-saved",
        "recording-started", "recording-paused", "recording-resumed", "recording-finished", "action-failed",
        "code-detected", "codes-in-frame", "frame-dropped", "frame-saved", "device-configured", "saved-to-library",
        "video-trimmed", "thumbnail-generated", "library-item-picked",
        "stream-ready", "stream-client-connected", "stream-client-disconnected", "stream-connected", "stream-disconnected",
    ]

    /// What `expect-error=` accepts: every `CaptureError` name and the runner's own.
    static let errorNames = CaptureError.allNames + [RunnerError.waitTimedOutName]

    /// Keys of each declaration and action. Every action also takes `expect-error`.
    static let sessionKeys = ["preset", "fallback-preset"]
    static let inputKeys = ["name", "device", "media", "pattern", "size", "framerate", "fail-after", "reconnect", "fallback"]
    static let outputCommonKeys = ["name", "kind", "input", "rotation", "mirrored"]
    static let outputKindKeys: [OutputKind: [String]] = [
        .photo: ["codec", "quality", "location", "size", "zero-shutter-lag", "crop", "save-to-library", "rotate-pixels", "overwrite"],
        .movie: [
            "location", "container", "video-codec", "audio-codec", "bitrate", "max-duration", "max-file-size",
            "min-free-disk-space", "fragment-interval", "save-to-library", "pre-roll", "encoder", "rotate-pixels", "overwrite",
        ],
        .metadata: ["types", "rect-of-interest", "backend", "highlight", "delivery", "discard-late-frames"],
        .frames: ["location", "max-rate", "size"],
        .preview: ["sink", "window", "gravity", "size"],
        .stream: ["serve", "publish", "bitrate", "audio-codec", "size", "encoder"],
    ]
    /// What an overlay draws and how (the keys of `OverlayFields`).
    static let overlayFieldKeys = [
        "text", "clock", "image", "width", "rectangle", "line", "polygon", "font", "size", "color",
        "background", "line-width", "fill", "position", "alpha",
    ]
    static let overlayKeys = ["name", "output"] + overlayFieldKeys
    static let deviceSettingKeys = [
        "focus-mode", "focus-point", "exposure-mode", "exposure-point", "exposure-bias", "white-balance-mode",
        "torch-mode", "torch-level", "flash-mode", "zoom", "low-light-boost", "lens-position", "exposure-duration", "gain",
        "white-balance-temperature", "controls",
    ]
    static let actionKeys: [String: [String]] = [
        "start": [], "stop": [],
        "wait": ["duration", "event", "output", "type", "value", "swapped", "count", "timeout"],
        "capture-photo": ["output", "location", "count", "interval", "flash-mode", "comment", "description", "latitude", "longitude", "altitude"],
        "start-recording": ["output", "location"],
        "stop-recording": ["output"], "pause-recording": ["output"], "resume-recording": ["output"],
        "begin-configuration": [], "commit-configuration": [],
        "remove-input": ["name"], "remove-output": ["name"],
        "set-preset": ["preset"],
        "configure-device": ["input"] + deviceSettingKeys,
        "expect": ["event", "output", "type", "value", "swapped", "count", "at-least"],
        "repeat": ["count", "actions"],
        "add-overlay": ["name", "output"] + overlayFieldKeys,
        "set-overlay": ["name", "output"] + overlayFieldKeys,
        "remove-overlay": ["name", "output"],
        "toggle-flash": ["output"],
        "switch-camera": ["position"],
        "trim-video": ["input", "recording", "picked", "from", "to", "location", "fast", "exact", "save-to-library"],
        "generate-thumbnail": ["input", "recording", "picked", "at", "location", "size"],
        "pick-from-library": ["name", "kind", "file"],
    ]

    static func outputKeys(_ kind: OutputKind?) -> [String] {
        outputCommonKeys + (kind.flatMap { outputKindKeys[$0] } ?? [])
    }

    /// The output kinds that have a key (for "key 'quality' belongs to photo outputs").
    static func kinds(having key: String) -> [OutputKind] {
        OutputKind.allCases.filter { outputKindKeys[$0]?.contains(key) ?? false }
    }

    /// Names must be usable as GStreamer element names (Capture's rule): a letter, then letters,
    /// digits, '-' and '_'.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, CharacterSet.letters.contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-" }
    }
}

/// Suggestions for misspelled words.
enum Suggest {
    /// The closest candidate within a small edit distance, if any.
    static func closest(to word: String, in candidates: [String]) -> String? {
        let limit = max(1, min(3, word.count / 3))
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(word.lowercased(), candidate.lowercased())
            if distance <= limit && distance < best?.1 ?? Int.max { best = (candidate, distance) }
        }
        return best?.0
    }

    /// " (did you mean 'x'?)" or "".
    static func didYouMean(_ word: String, _ candidates: [String]) -> String {
        closest(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
    /// neighbours each count 1 ("wiat" is 1 from "wait").
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    /// "a, b or c".
    static func list(_ words: [String], conjunction: String = "or") -> String {
        switch words.count {
        case 0: return ""
        case 1: return words[0]
        default: return words.dropLast().joined(separator: ", ") + " \(conjunction) " + words[words.count - 1]
        }
    }
}
