import Capture
import Foundation

/// The camera roll a camera app offers after the shot: pick an item of the session's media, crop a
/// photo (the picker's editing step), and preview a video's frames for a trim editor. Trims and
/// thumbnails that write files are the commands `trim` and `thumbnail`.
///
/// Every name a caller gives goes through the session's `SessionFolders`: a remote caller names only
/// regular files inside the output folder or the album (`RemoteAccess`), and writes only new files
/// inside the output folder. The work that blocks (folders read, media probed, images decoded and
/// written) runs on threads of its own, never on the concurrency pool.
extension SessionController {
    /// The most frames one `videoFrames` call decodes.
    public static let maximumPreviewFrames = 8
    /// The largest preview frame `videoFrames` makes (either side, pixels).
    public static let maximumPreviewSide = 1920

    /// The session's photos and videos (the output folder and, when the folders name one, the album),
    /// as `query` asks: what a picker's grid shows.
    public func mediaItems(_ query: MediaQuery = MediaQuery()) async -> [MediaEntry] {
        let folders = self.folders
        return await onOwnThread { folders.mediaEntries(query) }
    }

    /// The item a caller picked, with its size (and a video's duration) read: what the viewer or the
    /// player opens. Throws `notPermitted` for a name a remote caller may not read (outside the
    /// folders, `..`, an absolute path, a link leading out, not a regular file, no such file) and
    /// `notAMediaFile` for a file that is not a photo or a video.
    public func pickMedia(_ name: String, as caller: ControlCaller = .local) async throws(CaptureError) -> MediaEntry {
        try await confined(caller) { () async throws(CaptureError) -> MediaEntry in try await pick(name, caller: caller) }
    }

    private func pick(_ name: String, caller: ControlCaller) async throws(CaptureError) -> MediaEntry {
        let path = try folders.mediaPath(name, for: caller)
        guard let kind = MediaScan.kind(ofFile: path) else {
            throw .notAMediaFile(path: name, reason: "it is not a photo (.jpg, .png) or a video (.mp4, .m4v, .mov, .mkv, .webm)")
        }
        let found = await onOwnThread { (MediaLibrary.item(at: path, kind: kind), FileManager.default.fileExists(atPath: path)) }
        guard let item = found.0 else { throw .notAMediaFile(path: name, reason: found.1 ? "it is not a regular file" : "no such file") }
        return folders.entry(item)
    }

    /// The picker's editing step: crops (and scales) a photo into a new file and returns the original
    /// (never modified) and the edited image, both by the names callers know them by. Nothing is
    /// written when it fails.
    public func editImage(_ request: ImageEditRequest, as caller: ControlCaller = .local) async throws(CaptureError) -> ImageEditResult {
        try await confined(caller) { () async throws(CaptureError) -> ImageEditResult in try await edit(request, caller: caller) }
    }

    private func edit(_ request: ImageEditRequest, caller: ControlCaller) async throws(CaptureError) -> ImageEditResult {
        let source = try folders.mediaPath(request.source, for: caller)
        guard MediaScan.kind(ofFile: source) == .photo else {
            throw .notAMediaFile(path: request.source, reason: "the editing step edits photos (.jpg, .jpeg, .png)")
        }
        let isPNG = (source as NSString).pathExtension.lowercased() == "png"
        let location = try folders.writeLocation(
            request.location ?? folders.derivedName(for: request.source, suffix: "-edited", extension: isPNG ? "png" : "jpg"), for: caller)
        try FileNaming.checkLocation(location)
        let codec: PhotoCodec
        switch (location as NSString).pathExtension.lowercased() {
        case "png": codec = .png
        case "jpg", "jpeg": codec = .jpeg
        default: throw .invalidLocation(path: folders.name(of: location), reason: "the edited image's name ends in .jpg, .jpeg or .png")
        }
        let edit = try await ImageEditor.edit(imageAt: source, crop: request.crop, size: request.size, codec: codec, quality: request.quality)
        let bytes = edit.editedImage
        // The edited image under a new name; both files described as they are on disk.
        let written = await onOwnThread { () -> Result<(MediaLibrary.Item?, MediaLibrary.Item?), CaptureError> in
            do throws(CaptureError) {
                let path = try FileNaming.writeNew(bytes, to: location)
                return .success((MediaLibrary.item(at: source, kind: .photo), MediaLibrary.item(at: path, kind: .photo)))
            } catch {
                return .failure(error)
            }
        }
        guard case let (original?, edited?) = try written.get() else {
            throw .locationNotWritable(path: folders.name(of: location), reason: "the edited image is gone")
        }
        return ImageEditResult(
            original: folders.entry(original), edited: folders.entry(edited), cropX: edit.cropRect.x, cropY: edit.cropRect.y,
            cropWidth: edit.cropRect.width, cropHeight: edit.cropRect.height)
    }

    /// Frames of a video at `times`, encoded as JPEG and kept in memory (no file is written): what a
    /// trim editor shows at its range's ends. At most `maximumPreviewFrames` times, each image within
    /// `maximumSize` (nil: 320x320), at most `maximumPreviewSide` pixels a side.
    public func videoFrames(
        of source: VideoSource, at times: [AssetImageGenerator.Time], maximumSize: Size? = nil, as caller: ControlCaller = .local
    ) async throws(CaptureError) -> [AssetImageGenerator.Image] {
        try await confined(caller) { () async throws(CaptureError) -> [AssetImageGenerator.Image] in
            try await frames(of: source, at: times, maximumSize: maximumSize, caller: caller)
        }
    }

    private func frames(
        of source: VideoSource, at times: [AssetImageGenerator.Time], maximumSize: Size?, caller: ControlCaller
    ) async throws(CaptureError) -> [AssetImageGenerator.Image] {
        guard !times.isEmpty, times.count <= Self.maximumPreviewFrames else {
            throw .invalidConfiguration(object: "video frames", reason: "ask for 1 to \(Self.maximumPreviewFrames) times, not \(times.count)")
        }
        let size = maximumSize ?? Size(width: 320, height: 320)
        guard (2...Self.maximumPreviewSide).contains(size.width), (2...Self.maximumPreviewSide).contains(size.height) else {
            throw .invalidConfiguration(object: "video frames", reason: "the size \(size) must lie within 2...\(Self.maximumPreviewSide) a side")
        }
        // A file by the names the picker gives (the album's too, for every caller); a movie output's
        // last recording as the trim command reads it.
        let path: String
        switch source {
        case .file(let name): path = try folders.mediaPath(name, for: caller)
        case .lastRecording, .picked: path = try video(source, caller: caller)
        }
        var generator = AssetImageGenerator(videoAt: path)
        generator.maximumSize = size
        return try await generator.images(at: times)
    }

    /// A small image of an item for a picker's grid, encoded as JPEG and kept in memory (no file is
    /// written): a photo scaled to fit `maximumSize`, a video's first frame. `maximumSize` lies within
    /// 16...`maximumPreviewSide` a side.
    public func previewImage(
        of name: String, maximumSize: Size = Size(width: 320, height: 320), as caller: ControlCaller = .local
    ) async throws(CaptureError) -> PreviewImage {
        try await confined(caller) { () async throws(CaptureError) -> PreviewImage in
            guard (16...Self.maximumPreviewSide).contains(maximumSize.width), (16...Self.maximumPreviewSide).contains(maximumSize.height) else {
                throw .invalidConfiguration(object: "preview image", reason: "the size \(maximumSize) must lie within 16...\(Self.maximumPreviewSide) a side")
            }
            let path = try folders.mediaPath(name, for: caller)
            switch MediaScan.kind(ofFile: path) {
            case .photo:
                let edit = try await ImageEditor.edit(imageAt: path, size: maximumSize, codec: .jpeg, quality: 80)
                return PreviewImage(data: edit.editedImage, width: edit.width, height: edit.height, time: nil)
            case .video:
                let frame = try await frames(of: .file(name), at: [.seconds(0)], maximumSize: maximumSize, caller: caller)[0]
                return PreviewImage(data: frame.data, width: frame.width, height: frame.height, time: frame.actualTime)
            case nil:
                throw .notAMediaFile(path: name, reason: "it is not a photo (.jpg, .png) or a video (.mp4, .m4v, .mov, .mkv, .webm)")
            }
        }
    }

    /// Runs a call; a remote caller's error names files as the caller knows them (`remoteError`).
    /// A remote caller's media work waits for its turn at `mediaWork` (or is refused as `busy`), and its
    /// errors name files as the caller knows them.
    private func confined<T>(_ caller: ControlCaller, _ work: () async throws(CaptureError) -> T) async throws(CaptureError) -> T {
        do {
            return try await gated(caller, work)
        } catch { throw caller == .remote ? folders.remoteError(error) : error }
    }
}
