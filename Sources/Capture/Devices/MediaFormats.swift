import Foundation
import GStreamer
import Synchronization

/// What a device captures.
public enum MediaType: String, Sendable, Codable, CaseIterable {
    /// `video`: a camera (or the test pattern, a video file); `audio`: a microphone (or the test tone).
    case video, audio
}

/// Where a camera points, when the device says so.
public enum DevicePosition: String, Sendable, Codable {
    /// `front` and `back`: the device says it faces the user or away; `external`: another position it
    /// gives, or a USB camera; `unspecified`: the device does not say.
    case front, back, external, unspecified
}

/// A frame rate as an exact fraction.
public struct FrameRate: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// The frames per `denominator` seconds.
    public var numerator: Int
    /// The seconds `numerator` frames take; at least 1.
    public var denominator: Int
    /// The rate `numerator`/`denominator` frames per second: `FrameRate(30000, 1001)` is 29.97 fps. A denominator below 1 is taken as 1.
    public init(_ numerator: Int, _ denominator: Int = 1) {
        self.numerator = numerator
        self.denominator = max(denominator, 1)
    }
    /// The rate of `value` frames per second: whole numbers exactly, others to a thousandth of a frame.
    public init(_ value: Double) {
        if value == value.rounded() { self.init(Int(value), 1) } else { self.init(Int((value * 1000).rounded()), 1000) }
    }
    /// The frames per second as a number.
    public var value: Double { Double(numerator) / Double(denominator) }
    /// True when `lhs` is the slower rate.
    public static func < (lhs: FrameRate, rhs: FrameRate) -> Bool { lhs.value < rhs.value }
    /// The frames per second as text: `30`, or `29.97` for a fraction.
    public var description: String {
        denominator == 1 ? "\(numerator)" : String(format: "%g", value)
    }
    /// The GStreamer fraction form, "25/2".
    public var caps: String { "\(numerator)/\(denominator)" }
}

/// A pixel size.
public struct Size: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int
    /// A size of `width` by `height` pixels.
    public init(width: Int, height: Int) { self.width = width; self.height = height }
    /// The number of pixels, width times height.
    public var area: Int { width * height }
    /// The size as `1280x720`.
    public var description: String { "\(width)x\(height)" }
    /// Parses "1280x720".
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0 else { return nil }
        self.init(width: width, height: height)
    }
    /// True when `other` fits inside this size: neither wider nor taller.
    public func covers(_ other: Size) -> Bool { width >= other.width && height >= other.height }
}

/// One format a device can deliver: a media type (`video/x-raw`, `image/jpeg`, `audio/x-raw`),
/// a pixel or sample format, a size and the frame rates it offers at that size.
public struct DeviceFormat: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The GStreamer media type: `video/x-raw`, `image/jpeg`, `audio/x-raw` ...
    public var mediaSubtype: String
    /// The pixel or sample format (`YUY2`, `NV12`, `S16LE` ...), nil when the caps give none (JPEG and other compressed formats).
    public var pixelFormat: String?
    /// The frame size, for video formats.
    public var size: Size?
    /// The frame rates offered at this size, fastest first.
    public var frameRates: [FrameRate]
    /// For audio formats.
    public var sampleRate: Int?
    /// The number of audio channels, for audio formats.
    public var channels: Int?

    /// A format; `frameRates` are sorted fastest first.
    public init(mediaSubtype: String, pixelFormat: String?, size: Size?, frameRates: [FrameRate], sampleRate: Int? = nil, channels: Int? = nil) {
        self.mediaSubtype = mediaSubtype
        self.pixelFormat = pixelFormat
        self.size = size
        self.frameRates = frameRates.sorted(by: >)
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// The fastest frame rate offered, nil when none is.
    public var maxFrameRate: FrameRate? { frameRates.first }
    /// True for an encoded format (JPEG, H.264 ...): anything but `video/x-raw` and `audio/x-raw`.
    public var isCompressed: Bool { mediaSubtype != "video/x-raw" && mediaSubtype != "audio/x-raw" }

    /// The format in one line: `YUY2 1280x720 @ 30,15 fps`, or the sample rate and channels of an audio format.
    public var description: String {
        if let size {
            let rates = frameRates.map(\.description).joined(separator: ",")
            return "\(pixelFormat ?? mediaSubtype) \(size) @ \(rates) fps"
        }
        return "\(pixelFormat ?? mediaSubtype) \(sampleRate.map { "\($0) Hz" } ?? "") \(channels.map { "\($0) ch" } ?? "")"
    }

    /// Reads the formats of a device's caps: one entry per (format, size), expanding lists.
    /// Sizes given as ranges (virtual sources) are expanded to the standard sizes inside the range.
    static func formats(from caps: Caps) -> [DeviceFormat] {
        var result: [DeviceFormat] = []
        for structure in caps.structures {
            let media = structure.name
            let pixelFormats = structure.has("format") ? structure.elements("format").map(unquote) : [nil]
            if media.hasPrefix("audio/") {
                let rate = structure.int("rate") ?? structure.intRange("rate")?.upperBound
                let channels = structure.int("channels") ?? structure.intRange("channels")?.upperBound
                for format in pixelFormats {
                    result.append(DeviceFormat(mediaSubtype: media, pixelFormat: format, size: nil, frameRates: [], sampleRate: rate, channels: channels))
                }
                continue
            }
            var sizes: [Size] = []
            if let width = structure.int("width"), let height = structure.int("height") {
                sizes = [Size(width: width, height: height)]
            } else if let widths = structure.intRange("width"), let heights = structure.intRange("height") {
                sizes = Size.standard.filter { widths.contains($0.width) && heights.contains($0.height) }
            }
            let rates = frameRates(structure)
            for format in pixelFormats {
                for size in sizes {
                    result.append(DeviceFormat(mediaSubtype: media, pixelFormat: format, size: size, frameRates: rates))
                }
            }
        }
        return Array(Set(result)).sorted {
            ($0.size?.area ?? 0, $0.maxFrameRate?.value ?? 0, $0.description) > ($1.size?.area ?? 0, $1.maxFrameRate?.value ?? 0, $1.description)
        }
    }

    private static func frameRates(_ structure: Structure) -> [FrameRate] {
        if let (numerator, denominator) = structure.fraction("framerate") { return [FrameRate(numerator, denominator)] }
        if let range = structure.fractionRange("framerate") {
            return FrameRate.standard.filter { range.contains($0.value) && $0.value > 0 }
        }
        return structure.elements("framerate").compactMap { text in
            let parts = text.split(separator: "/")
            guard parts.count == 2, let numerator = Int(parts[0]), let denominator = Int(parts[1]), numerator > 0 else { return nil }
            return FrameRate(numerator, denominator)
        }
    }

    private static func unquote(_ text: String) -> String? {
        text.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
}

extension Size {
    /// Sizes offered by sources that accept any size (the test pattern), smallest first.
    public static let standard: [Size] = [
        Size(width: 192, height: 144), Size(width: 320, height: 240), Size(width: 352, height: 288),
        Size(width: 480, height: 360), Size(width: 640, height: 480), Size(width: 1280, height: 720),
        Size(width: 1920, height: 1080), Size(width: 3840, height: 2160),
    ]
}

extension FrameRate {
    /// Frame rates offered by sources that accept any rate (the test pattern, a range of rates), slowest first.
    public static let standard: [FrameRate] = [FrameRate(5), FrameRate(10), FrameRate(15), FrameRate(25), FrameRate(30), FrameRate(60)]
}
