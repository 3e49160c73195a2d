import Foundation

/// The still-image codecs.
public enum PhotoCodec: String, Sendable, CaseIterable, Codable {
    /// `jpeg`: JPEG, with EXIF tags and the request's quality; `png`: lossless PNG, with text chunks.
    case jpeg, png
    /// The file extension photos of this codec are saved with: `jpg` or `png`.
    public var fileExtension: String { self == .jpeg ? "jpg" : "png" }
}

/// Flash modes, like `AVCaptureDevice.FlashMode`.
public enum FlashMode: String, Sendable, CaseIterable, Codable {
    /// `off`: no flash; `on`: the flash fires for the shot (a device without a flash refuses it);
    /// `auto`: fires when the scene needs it — the mean luma of the last frame before the shot below a
    /// fifth of full scale — and never on a device without a flash (which reports `auto`
    /// unsupported, `CaptureDevice.isFlashModeSupported(_:)`). `ResolvedPhotoSettings.isFlashEnabled`
    /// and the photo's EXIF Flash tag say whether it fired.
    case off, on, auto
}

/// Per-shot tags written into the file (EXIF for JPEG, text chunks for PNG).
public struct PhotoTags: Hashable, Sendable, Codable {
    /// The GPS latitude in degrees (north positive).
    public var latitude: Double?
    /// The GPS longitude in degrees (east positive).
    public var longitude: Double?
    /// The GPS altitude in metres.
    public var altitude: Double?
    /// A comment (a JPEG comment segment; a PNG text chunk).
    public var comment: String?
    /// A description of the picture (the EXIF image description; a PNG text chunk).
    public var description: String?
    /// Tags for a shot; every one is unset by default.
    public init(latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil, comment: String? = nil, description: String? = nil) {
        self.latitude = latitude; self.longitude = longitude; self.altitude = altitude
        self.comment = comment; self.description = description
    }
}

/// What one photo request asks for, like `AVCapturePhotoSettings`. Each value has a unique id.
public struct PhotoSettings: Sendable {
    private static let counter = Locked<Int64>(0)

    /// The request's ID, unique in the process: the `id` of its events and of its resolved settings.
    public let uniqueID: Int64
    /// The still's codec (JPEG by default).
    public var codec: PhotoCodec
    /// JPEG quality, 1...100.
    public var quality: Int
    /// The still's size (nil: the session preset's size). The stream is scaled and, when the aspect
    /// ratio differs, center-cropped to it. Never larger than the device's frame.
    public var size: Size?
    /// A crop of the frame (the image picker's `allowsEditing` crop), applied before scaling.
    public var crop: NormalizedRect?
    /// Whether the flash fires for the shot (`off` by default).
    public var flashMode: FlashMode
    /// Where to save (a `%d` pattern numbers files). nil: the output's location; when both are nil the
    /// photo is only returned, not saved.
    public var location: String?
    /// Tags written into the file.
    public var tags: PhotoTags

    /// Settings for one shot, with a new unique ID.
    /// - Parameters:
    ///   - codec: JPEG or PNG.
    ///   - quality: The JPEG quality, 1...100.
    ///   - size: The still's size; nil for the session preset's size.
    ///   - crop: A normalized crop of the frame, applied before scaling; nil for the output's default crop.
    ///   - flashMode: Whether the flash fires.
    ///   - location: Where to save; nil for the output's location.
    ///   - tags: Tags written into the file.
    public init(
        codec: PhotoCodec = .jpeg, quality: Int = 90, size: Size? = nil, crop: NormalizedRect? = nil,
        flashMode: FlashMode = .off, location: String? = nil, tags: PhotoTags = PhotoTags()
    ) {
        uniqueID = Self.counter.withLock {
            $0 += 1; return $0
        }
        self.codec = codec
        self.quality = quality
        self.size = size
        self.crop = crop
        self.flashMode = flashMode
        self.location = location
        self.tags = tags
    }
}

/// The settings as the output resolved them for a shot.
public struct ResolvedPhotoSettings: Sendable, Equatable {
    /// The request's unique ID.
    public var uniqueID: Int64
    /// The codec the photo is encoded with.
    public var codec: PhotoCodec
    /// The JPEG quality, 1...100.
    public var quality: Int
    /// The photo's size as shown: after a turn that is stored as the EXIF Orientation (the stored
    /// pixels are then its height by its width).
    public var size: Size
    /// Pixels cut from each side of the device frame before scaling.
    public var cropLeft: Int, cropTop: Int, cropRight: Int, cropBottom: Int
    /// The flash mode of the shot (`auto` becomes `off` on a device without a flash).
    public var flashMode: FlashMode
    /// Whether the flash fired for the shot, like `AVCaptureResolvedPhotoSettings.isFlashEnabled`:
    /// with `on`, always; with `auto`, when the scene was dark (the frame's mean luma below
    /// `SceneMeter`'s threshold, a fifth of full scale); never with `off` or without a flash.
    public var isFlashEnabled: Bool = false
    /// Where the photo is saved, with the codec's file extension; nil when it is only returned.
    public var location: String?
    /// The tags written into the file.
    public var tags: PhotoTags
    /// True when the photo replaces the file at `location` (the output's `overwritesExistingFile`, a
    /// plain location); false when it takes the first free name.
    public var overwritesExistingFile = false
}

/// A captured photo, like `AVCapturePhoto`.
public struct Photo: Sendable {
    /// The encoded file (JPEG or PNG), with its tags.
    public let fileDataRepresentation: [UInt8]
    /// The stored picture's width in pixels, after crop and scaling (and the connection's turn when it
    /// `rotatesPixels`; otherwise the EXIF Orientation says how to show the pixels).
    public let width: Int
    /// The stored picture's height in pixels (see `width`).
    public let height: Int
    /// The frame's time on the session clock, in seconds.
    public let timestamp: Double
    /// Frame time minus request time, in seconds (negative: an earlier frame from the zero-shutter-lag ring).
    public let shutterLag: Double
    /// The settings the photo was taken with, as the output resolved them.
    public let resolvedSettings: ResolvedPhotoSettings
    /// The tags written into the file.
    public let metadata: [String: String]
    /// Where the photo was saved, when it was.
    public let location: String?
}

/// The callbacks of one photo request, in AVFoundation's order: will-begin, will-capture (the shutter
/// moment), did-capture, did-finish-processing (photo or error), did-finish-capture. Called on the
/// output's serial delegate queue.
public protocol CapturePhotoCaptureDelegate: AnyObject, Sendable {
    /// The request was accepted and waits for its frame.
    func photoOutput(_ output: CapturePhotoOutput, willBeginCaptureFor settings: ResolvedPhotoSettings)
    /// The shutter moment: the frame for the photo is chosen.
    func photoOutput(_ output: CapturePhotoOutput, willCapturePhotoFor settings: ResolvedPhotoSettings)
    /// The frame for the photo is taken and goes to the encoder.
    func photoOutput(_ output: CapturePhotoOutput, didCapturePhotoFor settings: ResolvedPhotoSettings)
    /// The photo is encoded (and saved, when a location applies), or the request failed.
    func photoOutput(_ output: CapturePhotoOutput, didFinishProcessingPhoto result: Result<Photo, CaptureError>)
    /// The request is over; `error` is nil when the photo was made.
    func photoOutput(_ output: CapturePhotoOutput, didFinishCaptureFor settings: ResolvedPhotoSettings, error: CaptureError?)
}

extension CapturePhotoCaptureDelegate {
    /// Does nothing by default.
    public func photoOutput(_ output: CapturePhotoOutput, willBeginCaptureFor settings: ResolvedPhotoSettings) {}
    /// Does nothing by default.
    public func photoOutput(_ output: CapturePhotoOutput, willCapturePhotoFor settings: ResolvedPhotoSettings) {}
    /// Does nothing by default.
    public func photoOutput(_ output: CapturePhotoOutput, didCapturePhotoFor settings: ResolvedPhotoSettings) {}
    /// Does nothing by default.
    public func photoOutput(_ output: CapturePhotoOutput, didFinishProcessingPhoto result: Result<Photo, CaptureError>) {}
    /// Does nothing by default.
    public func photoOutput(_ output: CapturePhotoOutput, didFinishCaptureFor settings: ResolvedPhotoSettings, error: CaptureError?) {}
}
