import Foundation

/// The still-image codecs.
public enum PhotoCodec: String, Sendable, CaseIterable, Codable {
    case jpeg, png
    public var fileExtension: String { self == .jpeg ? "jpg" : "png" }
}

/// Flash modes, like `AVCaptureDevice.FlashMode`.
public enum FlashMode: String, Sendable, CaseIterable, Codable {
    case off, on, auto
}

/// Per-shot tags written into the file (EXIF for JPEG, text chunks for PNG).
public struct PhotoTags: Hashable, Sendable, Codable {
    public var latitude: Double?
    public var longitude: Double?
    public var altitude: Double?
    public var comment: String?
    public var description: String?
    public init(latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil, comment: String? = nil, description: String? = nil) {
        self.latitude = latitude; self.longitude = longitude; self.altitude = altitude
        self.comment = comment; self.description = description
    }
}

/// What one photo request asks for, like `AVCapturePhotoSettings`. Each value has a unique id.
public struct PhotoSettings: Sendable {
    private static let counter = Locked<Int64>(0)

    public let uniqueID: Int64
    public var codec: PhotoCodec
    /// JPEG quality, 1...100.
    public var quality: Int
    /// The still's size (nil: the session preset's size). The stream is scaled and, when the aspect
    /// ratio differs, center-cropped to it. Never larger than the device's frame.
    public var size: Size?
    /// A crop of the frame (the image picker's `allowsEditing` crop), applied before scaling.
    public var crop: NormalizedRect?
    public var flashMode: FlashMode
    /// Where to save (a `%d` pattern numbers files). nil: the output's location; when both are nil the
    /// photo is only returned, not saved.
    public var location: String?
    public var tags: PhotoTags

    public init(codec: PhotoCodec = .jpeg, quality: Int = 90, size: Size? = nil, crop: NormalizedRect? = nil,
                flashMode: FlashMode = .off, location: String? = nil, tags: PhotoTags = PhotoTags()) {
        uniqueID = Self.counter.withLock { $0 += 1; return $0 }
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
    public var uniqueID: Int64
    public var codec: PhotoCodec
    public var quality: Int
    /// The pixel size of the photo.
    public var size: Size
    /// Pixels cut from each side of the device frame before scaling.
    public var cropLeft: Int, cropTop: Int, cropRight: Int, cropBottom: Int
    public var flashMode: FlashMode
    public var location: String?
    public var tags: PhotoTags
}

/// A captured photo, like `AVCapturePhoto`.
public struct Photo: Sendable {
    /// The encoded file (JPEG or PNG), with its tags.
    public let fileDataRepresentation: [UInt8]
    public let width: Int
    public let height: Int
    /// The frame's time on the session clock, in seconds.
    public let timestamp: Double
    /// Frame time minus request time, in seconds (negative: an earlier frame from the zero-shutter-lag ring).
    public let shutterLag: Double
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
    func photoOutput(_ output: CapturePhotoOutput, willBeginCaptureFor settings: ResolvedPhotoSettings)
    func photoOutput(_ output: CapturePhotoOutput, willCapturePhotoFor settings: ResolvedPhotoSettings)
    func photoOutput(_ output: CapturePhotoOutput, didCapturePhotoFor settings: ResolvedPhotoSettings)
    func photoOutput(_ output: CapturePhotoOutput, didFinishProcessingPhoto result: Result<Photo, CaptureError>)
    func photoOutput(_ output: CapturePhotoOutput, didFinishCaptureFor settings: ResolvedPhotoSettings, error: CaptureError?)
}

extension CapturePhotoCaptureDelegate {
    public func photoOutput(_ output: CapturePhotoOutput, willBeginCaptureFor settings: ResolvedPhotoSettings) {}
    public func photoOutput(_ output: CapturePhotoOutput, willCapturePhotoFor settings: ResolvedPhotoSettings) {}
    public func photoOutput(_ output: CapturePhotoOutput, didCapturePhotoFor settings: ResolvedPhotoSettings) {}
    public func photoOutput(_ output: CapturePhotoOutput, didFinishProcessingPhoto result: Result<Photo, CaptureError>) {}
    public func photoOutput(_ output: CapturePhotoOutput, didFinishCaptureFor settings: ResolvedPhotoSettings, error: CaptureError?) {}
}
