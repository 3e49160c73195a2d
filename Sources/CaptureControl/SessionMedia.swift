import Capture
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One photo or video of the session's media, as the picker shows it: a file of the output folder
/// (subfolders two levels down) or, when the session's folders name an album (`RemoteAccess.album`),
/// of the album's Pictures and Videos folders.
public struct MediaEntry: Sendable, Hashable {
    /// The name every caller gives it back: relative to the output folder (`IMG_0001.jpg`,
    /// `stills/0003.png`), or `album-photos/NAME` / `album-videos/NAME` for the album's items.
    public var name: String
    /// The file's path (a local caller's to open; a remote surface sends `name` only).
    public var path: String
    /// A photo (JPEG, PNG) or a video (MP4, M4V, MOV, MKV, WebM).
    public var kind: MediaLibrary.MediaKind
    /// Bytes on disk.
    public var size: Int64
    /// When the file was last written.
    public var modified: Date
    /// True for an item of the album.
    public var inAlbum: Bool
    /// The width and height in pixels, when read (`SessionController.pickMedia` reads them; a list
    /// does not).
    public var width: Int?, height: Int?
    /// The duration in seconds of a video, when read (`pickMedia`).
    public var duration: Double?

    /// An entry; sizes and duration unknown unless given.
    public init(
        name: String, path: String, kind: MediaLibrary.MediaKind, size: Int64, modified: Date, inAlbum: Bool = false, width: Int? = nil,
        height: Int? = nil, duration: Double? = nil
    ) {
        self.name = name
        self.path = path
        self.kind = kind
        self.size = size
        self.modified = modified
        self.inAlbum = inAlbum
        self.width = width
        self.height = height
        self.duration = duration
    }
}

/// Which of the session's media a picker lists, and in which order.
public struct MediaQuery: Sendable, Hashable {
    /// The order of a list.
    public enum Order: String, Sendable, CaseIterable {
        /// Newest first (by modification time, then name): what the picker's photo-library source offers.
        case newest
        /// By name (the output folder's items, then the album's).
        case name
    }

    /// Photos or videos only (nil: both).
    public var kind: MediaLibrary.MediaKind?
    /// The order.
    public var order: Order
    /// The most items listed (at least 1; at most `maximumLimit`).
    public var limit: Int

    /// The most items one list holds.
    public static let maximumLimit = 1000

    /// A query; by default photos and videos, newest first, up to 200.
    public init(kind: MediaLibrary.MediaKind? = nil, order: Order = .newest, limit: Int = 200) {
        self.kind = kind
        self.order = order
        self.limit = min(max(1, limit), Self.maximumLimit)
    }
}

/// The picker's editing step for a photo (`UIImagePickerController.allowsEditing`, recipe 9-1): a crop
/// rectangle and an optional size; the original stays as it is and the edited image becomes a new file.
public struct ImageEditRequest: Sendable, Hashable {
    /// The photo edited, by its name (`MediaEntry.name`; a local caller may also give a path).
    public var source: String
    /// The crop, as fractions of the picture (origin top left).
    public var crop: NormalizedRect
    /// The largest size the edited image may have (nil: the crop's own size).
    public var size: Size?
    /// Where the edited image goes (relative: in the output folder; `.jpg` or `.png`); nil: next to
    /// the original as `NAME-edited.EXT` (an album photo's in the output folder), numbered when taken.
    public var location: String?
    /// JPEG quality, 1-100.
    public var quality: Int

    /// An edit of the photo named `source`.
    public init(source: String, crop: NormalizedRect, size: Size? = nil, location: String? = nil, quality: Int = 90) {
        self.source = source
        self.crop = crop
        self.size = size
        self.location = location
        self.quality = quality
    }
}

/// What the editing step gave: the original (never modified) and the edited image's new file, as the
/// picker's `OriginalImage`, `EditedImage` and `CropRect` keys hold them.
public struct ImageEditResult: Sendable, Hashable {
    /// The photo that was edited, with its size.
    public var original: MediaEntry
    /// The edited image's new file, with its size.
    public var edited: MediaEntry
    /// The crop in the original's pixels.
    public var cropX: Int, cropY: Int, cropWidth: Int, cropHeight: Int
}

/// A small image of an item, in memory (`SessionController.previewImage`).
public struct PreviewImage: Sendable, Hashable {
    /// The image, encoded as JPEG.
    public var data: [UInt8]
    /// Its width and height in pixels.
    public var width: Int, height: Int
    /// For a video: the time of the frame, in seconds.
    public var time: Double?

    /// An image; `time` for a video's frame.
    public init(data: [UInt8], width: Int, height: Int, time: Double? = nil) {
        self.data = data
        self.width = width
        self.height = height
        self.time = time
    }
}

/// The photos and videos of a folder, as the picker and the served gallery list them.
public enum MediaScan {
    /// A file's kind from its extension: `.jpg`, `.jpeg`, `.png` photos; `.mp4`, `.m4v`, `.mov`,
    /// `.mkv`, `.webm` videos (nil: neither).
    public static func kind(ofFile name: String) -> MediaLibrary.MediaKind? {
        switch (name as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg", "png": .photo
        case "mp4", "m4v", "mkv", "webm", "mov": .video
        default: nil
        }
    }

    /// One file found: its path relative to the folder, its kind, size and modification time.
    public struct File: Sendable, Hashable {
        /// The path relative to the folder listed.
        public var name: String
        /// Photo or video.
        public var kind: MediaLibrary.MediaKind
        /// Bytes.
        public var size: Int64
        /// When it was last written.
        public var modified: Date
    }

    /// The photos and videos in `folder` and its subfolders `depth` levels down, in no set order:
    /// regular, non-empty files with a photo or video extension; hidden names, symbolic links, devices,
    /// FIFOs and sockets are never listed. At most `scanLimit` entries are read, so that a huge folder
    /// cannot stall a caller. Blocking (it reads folders): call it off the concurrency pool.
    public static func files(in folder: String, depth: Int = 2, scanLimit: Int = 20_000) -> [File] {
        var found: [File] = []
        var scanned = 0
        func walk(_ folder: String, prefix: String, level: Int) {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
            for name in names.sorted() where !name.hasPrefix(".") {
                scanned += 1
                guard scanned <= scanLimit else { return }
                let path = (folder as NSString).appendingPathComponent(name)
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                let id = prefix.isEmpty ? name : "\(prefix)/\(name)"
                switch info.st_mode & S_IFMT {
                case S_IFDIR where level < depth:
                    walk(path, prefix: id, level: level + 1)
                case S_IFREG:
                    guard let kind = kind(ofFile: name), info.st_size > 0 else { continue }
                    let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
                    found.append(File(name: id, kind: kind, size: Int64(info.st_size), modified: modified))
                default:
                    continue  // symbolic links, devices, sockets: never listed
                }
            }
        }
        walk(folder, prefix: "", level: 0)
        return found
    }
}

extension SessionFolders {
    /// The album a picker lists beside the output folder (`RemoteAccess.album`), with the names its
    /// folders' items have: `album-photos/` for the Pictures folder, `album-videos/` for the Videos
    /// folder. Empty without an album, and without a folder that is the output folder itself.
    var albumFolders: [(prefix: String, folder: String, kind: MediaLibrary.MediaKind)] {
        guard let album = remote.album else { return [] }
        return [(Self.albumPhotos, album.picturesFolder, .photo), (Self.albumVideos, album.videosFolder, .video)].filter { entry in
            (entry.1 as NSString).standardizingPath != outputFolder
        }
    }

    /// The session's photos and videos as `query` asks. Blocking (it reads folders).
    func mediaEntries(_ query: MediaQuery) -> [MediaEntry] {
        var entries = MediaScan.files(in: outputFolder).map { file in
            MediaEntry(
                name: file.name, path: (outputFolder as NSString).appendingPathComponent(file.name), kind: file.kind, size: file.size,
                modified: file.modified)
        }
        for (prefix, folder, kind) in albumFolders {
            for file in MediaScan.files(in: folder, depth: 0) where file.kind == kind {
                entries.append(
                    MediaEntry(
                        name: prefix + file.name, path: (folder as NSString).appendingPathComponent(file.name), kind: kind, size: file.size,
                        modified: file.modified, inAlbum: true))
            }
        }
        if let kind = query.kind { entries.removeAll { $0.kind != kind } }
        switch query.order {
        case .newest: entries.sort { ($0.modified, $0.name) > ($1.modified, $1.name) }
        case .name: entries.sort { ($0.inAlbum ? 1 : 0, $0.name) < ($1.inAlbum ? 1 : 0, $1.name) }
        }
        return Array(entries.prefix(query.limit))
    }

    /// The path of an item a caller names. Remote: `readLocation`'s rules (a regular file inside the
    /// output folder or the album, links followed). Local: a path as given, an album name in the
    /// album's folder, any other name against the output folder.
    func mediaPath(_ name: String, for caller: ControlCaller) throws(CaptureError) -> String {
        if caller == .local, !name.hasPrefix("/") {
            for (prefix, folder, _) in albumFolders where name.hasPrefix(prefix) {
                return (folder as NSString).appendingPathComponent(String(name.dropFirst(prefix.count)))
            }
        }
        return try readLocation(name, for: caller)
    }

    /// An item of the library as an entry, named as callers know it.
    func entry(_ item: MediaLibrary.Item) -> MediaEntry {
        let name = mediaName(of: item.path)
        return MediaEntry(
            name: name, path: item.path, kind: item.kind, size: item.size, modified: item.date,
            inAlbum: albumFolders.contains { name.hasPrefix($0.prefix) }, width: item.width, height: item.height, duration: item.duration)
    }

    /// The name a caller knows a path by: relative to the output folder inside it, `album-photos/NAME`
    /// or `album-videos/NAME` in the album, else the file's name.
    public func mediaName(of path: String) -> String {
        let standard = (path as NSString).standardizingPath
        let folder = (standard as NSString).deletingLastPathComponent
        for (prefix, albumFolder, _) in albumFolders where (albumFolder as NSString).standardizingPath == folder {
            return prefix + (standard as NSString).lastPathComponent
        }
        return name(of: standard)
    }

    /// A name for a file made from an item (a crop, a trim, a thumbnail), relative to the output
    /// folder: the item's name with `suffix` before the extension `ext` (`clip.mp4` → `clip-trim.mp4`),
    /// in the item's subfolder of the output folder, or in the output folder itself for an album's item
    /// or a path elsewhere. A `%` becomes `_`: a derived name never numbers like a pattern.
    public func derivedName(for source: String, suffix: String, extension ext: String) -> String {
        var name = source
        if source.hasPrefix("/") { name = self.name(of: source) }
        if albumFolders.contains(where: { name.hasPrefix($0.prefix) }) || name.hasPrefix("/") { name = (name as NSString).lastPathComponent }
        let stem = (name as NSString).deletingPathExtension
        return (stem + suffix + "." + ext).replacingOccurrences(of: "%", with: "_")
    }

    /// An error as a remote caller may read it: every file it names by the name the caller knows
    /// (`mediaName(of:)`), and the folders' paths taken out of its reasons. A reply never tells a
    /// remote caller where the session's folders are.
    public func remoteError(_ error: CaptureError) -> CaptureError {
        func file(_ path: String) -> String { path.hasPrefix("/") ? mediaName(of: path) : path }
        switch error {
        case .notAMediaFile(let path, let reason): return .notAMediaFile(path: file(path), reason: scrub(reason))
        case .fileAlreadyExists(let path): return .fileAlreadyExists(path: file(path))
        case .invalidLocation(let path, let reason): return .invalidLocation(path: file(path), reason: scrub(reason))
        case .locationNotWritable(let path, let reason): return .locationNotWritable(path: file(path), reason: scrub(reason))
        case .diskFull(let path): return .diskFull(path: file(path))
        case .recordingInProgress(let output, let location): return .recordingInProgress(output: output, location: file(location))
        case .recordingInterrupted(let output, let location): return .recordingInterrupted(output: output, location: file(location))
        case .recordingFailed(let output, let location, let reason):
            return .recordingFailed(output: output, location: file(location), reason: scrub(reason))
        case .minimumFreeDiskSpaceReached(let output, let path, let bytes): return .minimumFreeDiskSpaceReached(output: output, path: file(path), bytes: bytes)
        case .overlayImageUnreadable(let overlay, let path, let reason):
            return .overlayImageUnreadable(overlay: overlay, path: file(path), reason: scrub(reason))
        case .videoNotCompatible(let path, let reason): return .videoNotCompatible(path: file(path), reason: scrub(reason))
        case .timeOutOfRange(let path, let time, let duration): return .timeOutOfRange(path: file(path), time: time, duration: duration)
        case .invalidTimeRange(let path, let from, let to): return .invalidTimeRange(path: file(path), from: from, to: to)
        case .noFrameInRange(let path, let from, let to): return .noFrameInRange(path: file(path), from: from, to: to)
        case .editingFailed(let path, let reason): return .editingFailed(path: file(path), reason: scrub(reason))
        case .invalidConfiguration(let object, let reason): return .invalidConfiguration(object: scrub(object), reason: scrub(reason))
        default: return error
        }
    }

    /// A text with the folders' paths replaced by the names callers know (the output folder's files
    /// by their relative names, the album's by `album-photos/` and `album-videos/`).
    func scrub(_ text: String) -> String {
        var scrubbed = text
        for (prefix, folder, _) in albumFolders { scrubbed = scrubbed.replacingOccurrences(of: (folder as NSString).standardizingPath + "/", with: prefix) }
        scrubbed = scrubbed.replacingOccurrences(of: outputFolder + "/", with: "")
        return scrubbed.replacingOccurrences(of: outputFolder, with: "the output folder")
    }
}
