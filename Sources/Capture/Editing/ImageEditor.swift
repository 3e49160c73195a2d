import Foundation
import GStreamer

/// The image picker's editing step (`allowsEditing`) for a still on disk: a crop of the picture and a
/// scale, returning the original, the edited image and the crop rectangle, as
/// `UIImagePickerControllerOriginalImage`, `...EditedImage` and `...CropRect` do.
///
/// ```swift
/// let edit = try await ImageEditor.edit(imageAt: "IMG_0001.jpg", crop: NormalizedRect(x: 0.125, y: 0, width: 0.75, height: 1))
/// let saved = try await MediaLibrary.user().save(photoData: edit.editedImage)
/// ```
public enum ImageEditor {
    /// What the editing step gives back.
    public struct EditedImage: Sendable {
        /// The file that was edited (never modified).
        public var originalPath: String
        /// The original's width in pixels.
        public var originalWidth: Int
        /// The original's height in pixels.
        public var originalHeight: Int
        /// The edited image, encoded.
        public var editedImage: [UInt8]
        /// The edited image's width in pixels.
        public var width: Int
        /// The edited image's height in pixels.
        public var height: Int
        /// The crop in the original's pixels: x, y, width, height.
        public var cropRect: (x: Int, y: Int, width: Int, height: Int)
    }

    /// Crops (normalized to the picture, origin top left; nil: all of it) and scales (the result fits
    /// inside `size`, keeping the crop's aspect ratio; nil: the crop's own size) a JPEG or PNG file.
    public static func edit(
        imageAt path: String, crop: NormalizedRect? = nil, size: Size? = nil, codec: PhotoCodec = .jpeg,
        quality: Int = 90
    ) async throws(CaptureError) -> EditedImage {
        try await runBlocking("capture.image-editor") { () throws(CaptureError) -> EditedImage in
            try editNow(path: path, crop: crop, size: size, codec: codec, quality: quality)
        }
    }

    static func editNow(path: String, crop: NormalizedRect?, size: Size?, codec: PhotoCodec, quality: Int) throws(CaptureError) -> EditedImage {
        guard FileNaming.notARegularFile(path) == nil, FileManager.default.fileExists(atPath: path) else {
            throw .notAMediaFile(path: path, reason: FileNaming.notARegularFile(path).map { "it is \($0)" } ?? "no such file")
        }
        guard let header = MediaFiles.head(path).flatMap(MediaFiles.imageHeader) else {
            throw .notAMediaFile(path: path, reason: "it is not a JPEG or PNG image (or its header is cut short)")
        }
        guard (1...100).contains(quality) else {
            throw .invalidPhotoSettings(output: "image editor", reason: "quality must be 1...100, not \(quality)")
        }
        let rect = crop ?? .full
        guard rect.isValid else {
            throw .invalidPhotoSettings(output: "image editor", reason: "crop \(rect) must lie inside <0, 0, 1, 1> with a positive size")
        }
        // Even values keep the chroma planes aligned, as the photo output's crop does.
        let left = Int((rect.x * Double(header.width)).rounded()) & ~1
        let top = Int((rect.y * Double(header.height)).rounded()) & ~1
        let width = min(header.width - left, max(2, Int((rect.width * Double(header.width)).rounded()) & ~1))
        let height = min(header.height - top, max(2, Int((rect.height * Double(header.height)).rounded()) & ~1))
        guard width >= 16, height >= 16 else {
            throw .invalidPhotoSettings(
                output: "image editor", reason: "crop \(rect) leaves less than 16x16 pixels of the \(header.width)x\(header.height) image")
        }
        if let size, size.width < 16 || size.height < 16 {
            throw .invalidPhotoSettings(output: "image editor", reason: "size \(size) is below the 16x16 minimum")
        }
        let target = FrameGrabber.fitted(Size(width: width, height: height), in: size)
        let shape = FrameGrabber.Shape(
            cropLeft: left, cropTop: top, cropRight: header.width - left - width, cropBottom: header.height - top - height,
            size: target, codec: codec, quality: quality, appliesRotation: false)
        let grabbed = try FrameGrabber(path: path, shape: shape).frame(at: nil, flags: [])
        return EditedImage(
            originalPath: path, originalWidth: header.width, originalHeight: header.height, editedImage: grabbed.bytes,
            width: target.width, height: target.height, cropRect: (left, top, width, height))
    }
}
