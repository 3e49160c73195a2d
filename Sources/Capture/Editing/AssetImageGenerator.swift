import Foundation
import GStreamer

/// Images of a video at given times, like `AVAssetImageGenerator` (recipe 9-8: the thumbnail from the
/// middle of a movie).
///
/// ```swift
/// let generator = AssetImageGenerator(videoAt: "clip.mp4")
/// let image = try await generator.image()                     // the middle, the exact frame
/// try await generator.saveImage(at: .seconds(1.5), to: "thumb.jpg")
/// ```
///
/// Each image is decoded from the keyframe before the time (`tolerance = .exact`, AVFoundation's zero
/// tolerance) or is the nearest keyframe itself (`.keyframe`, faster), turned as the track's
/// rotation tag says (`appliesPreferredTrackTransform`), scaled to fit `maximumSize` and encoded as
/// JPEG or PNG. Several times in one call share one decoding pipeline.
public struct AssetImageGenerator: Sendable {
    /// How close to the requested time the frame must be.
    public enum Tolerance: String, Sendable, CaseIterable {
        /// The frame shown at the time (decoded from the keyframe before it).
        case exact
        /// The keyframe nearest the time (no decoding beyond it; AVFoundation's default tolerance).
        case keyframe
    }

    /// A time in the video.
    public enum Time: Sendable, Equatable, CustomStringConvertible {
        /// A time in seconds from the start.
        case seconds(Double)
        /// A fraction of the duration, 0...1 (`0.5`: the middle).
        case fraction(Double)

        /// The middle of the video.
        public static let middle = Time.fraction(0.5)

        /// The time as `1.5 s`, or a fraction as `50%`.
        public var description: String {
            switch self {
            case .seconds(let value): "\(CaptureError.seconds(value)) s"
            case .fraction(let value): "\(CaptureError.seconds(value * 100))%"
            }
        }

        /// Reads `2.5`, `"500ms"`, `"1.5m"` (a duration) or `50%` (a share of the duration).
        public init?(_ text: String) {
            if text.hasSuffix("%") {
                guard let percent = Double(text.dropLast()), percent.isFinite, (0...100).contains(percent) else { return nil }
                self = .fraction(percent / 100)
                return
            }
            guard let seconds = Self.seconds(text) else { return nil }
            self = .seconds(seconds)
        }

        private static func seconds(_ text: String) -> Double? {
            let units: [(String, Double)] = [("ms", 0.001), ("min", 60), ("s", 1), ("m", 60), ("h", 3600)]
            for (unit, scale) in units where text.hasSuffix(unit) {
                guard let value = Double(text.dropLast(unit.count)), value.isFinite, value >= 0 else { return nil }
                return value * scale
            }
            guard let value = Double(text), value.isFinite, value >= 0 else { return nil }
            return value
        }
    }

    /// One generated image.
    public struct Image: Sendable {
        /// The encoded image (JPEG or PNG).
        public var data: [UInt8]
        /// The image's width in pixels, after rotation and scaling.
        public var width: Int
        /// The image's height in pixels, after rotation and scaling.
        public var height: Int
        /// The time asked for, in seconds (a fraction of the duration turned into seconds).
        public var requestedTime: Double
        /// The time of the frame that was taken, in seconds (equal to the request within one frame
        /// when exact; the keyframe's time otherwise).
        public var actualTime: Double
        /// Where it was saved, when it was.
        public var location: String?
    }

    /// The video file the images are taken from.
    public let path: String
    /// How close to the requested time the frame must be (`exact` by default).
    public var tolerance: Tolerance = .exact
    /// The image fits inside this size, keeping its aspect ratio; nil: the video's own size.
    public var maximumSize: Size?
    /// The codec the images are encoded with (JPEG by default).
    public var codec: PhotoCodec = .jpeg
    /// JPEG quality, 1-100.
    public var quality = 90
    /// Turn the image as the track's rotation tag says (`image-orientation`).
    public var appliesPreferredTrackTransform = true

    /// A generator for the video at `path`: exact frames at the video's own size, turned as its track says, as JPEG at quality 90.
    public init(videoAt path: String) { self.path = path }

    /// The image at a time (default: the middle of the video).
    public func image(at time: Time = .middle) async throws(CaptureError) -> Image {
        try await images(at: [time])[0]
    }

    /// The images at several times, in the order asked, from one decoding pipeline.
    public func images(at times: [Time]) async throws(CaptureError) -> [Image] {
        let generator = self
        return try await runBlocking("capture.image-generator") { () throws(CaptureError) -> [Image] in try generator.generate(times) }
    }

    /// Saves the image at a time to `location` (never replacing a file: a taken name becomes
    /// `name-1.jpg`); the extension follows `codec` when the location has none.
    public func saveImage(at time: Time = .middle, to location: String) async throws(CaptureError) -> Image {
        try FileNaming.checkLocation(location)
        var image = try await image(at: time)
        try FileNaming.checkImageExtension(location, codec)
        let (target, data) = (FileNaming.withExtension(location, codec), image.data)
        image.location = try await runBlocking("capture.image-generator") { () throws(CaptureError) -> String in
            try FileNaming.writeNew(data, to: target)
        }
        return image
    }

    /// The work of `images(at:)`, on the caller's thread.
    func generate(_ times: [Time]) throws(CaptureError) -> [Image] {
        guard !times.isEmpty else { return [] }
        guard (1...100).contains(quality) else {
            throw .invalidConfiguration(object: "image generator for \(path)", reason: "quality must be 1...100, not \(quality)")
        }
        if let maximumSize, maximumSize.width < 2 || maximumSize.height < 2 {
            throw .invalidConfiguration(object: "image generator for \(path)", reason: "maximumSize \(maximumSize) must be at least 2x2")
        }
        let media = try MediaFiles.probe(path, needsVideo: true)
        guard let video = media.video else { throw .notAMediaFile(path: path, reason: "it has no video stream") }
        let shown: (width: Int, height: Int) = appliesPreferredTrackTransform ? video.displaySize : (video.width, video.height)
        let size = FrameGrabber.fitted(Size(width: shown.width, height: shown.height), in: maximumSize)
        let duration = media.duration
        // The last frame starts one frame before the end: a time at the very end takes it.
        let frame = video.frameRateNumerator > 0 ? UInt64(1e9 * Double(video.frameRateDenominator) / Double(video.frameRateNumerator)) : 33_333_333
        var positions: [UInt64] = []
        for time in times {
            let seconds: Double
            switch time {
            case .seconds(let value): seconds = value
            case .fraction(let value):
                guard value.isFinite, (0...1).contains(value) else {
                    throw .timeOutOfRange(path: path, time: value * media.durationSeconds, duration: media.durationSeconds)
                }
                seconds = value * media.durationSeconds
            }
            guard seconds.isFinite, seconds >= 0, seconds <= media.durationSeconds else {
                throw .timeOutOfRange(path: path, time: seconds, duration: media.durationSeconds)
            }
            positions.append(min(UInt64((seconds * 1e9).rounded()), duration > frame ? duration - frame : 0))
        }
        let grabber = try FrameGrabber(
            path: path,
            shape: FrameGrabber.Shape(
                size: size, codec: codec, quality: quality,
                appliesRotation: appliesPreferredTrackTransform))
        let flags: SeekFlags = tolerance == .exact ? .accurate : [.keyUnit, .snapNearest]
        return try zip(times, positions).map { (time, position) throws(CaptureError) -> Image in
            let grabbed = try grabber.frame(at: position, flags: flags)
            let requested: Double =
                switch time {
                case .seconds(let value): value
                case .fraction(let value): value * media.durationSeconds
                }
            return Image(
                data: grabbed.bytes, width: size.width, height: size.height, requestedTime: requested,
                actualTime: Double(grabbed.time) / 1e9, location: nil)
        }
    }
}
