import Foundation
import GStreamer

/// The user's saved photos and videos: the "saved photos album" of `UIImageWriteToSavedPhotosAlbum`,
/// `UISaveVideoAtPathToSavedPhotosAlbum` and the picker's photo-library source, on Linux.
///
/// Photos live in the user's Pictures folder and videos in the Videos folder (the XDG user
/// directories, `xdg-user-dir PICTURES` / `VIDEOS`). `CAPTURE_PICTURES_DIR` and `CAPTURE_VIDEOS_DIR`
/// override them, and `MediaLibrary(picturesFolder:videosFolder:)` names any two folders.
///
/// A save never replaces a file (a name already taken becomes `name-1.ext`) and a file appears under
/// its name only once it is complete (written to a temporary file in the folder, flushed, linked).
public struct MediaLibrary: Sendable, Hashable {
    /// The folder photos are saved to and listed from.
    public var picturesFolder: String
    /// The folder videos are saved to and listed from.
    public var videosFolder: String

    /// A library in the two folders given, for photos and for videos.
    public init(picturesFolder: String, videosFolder: String) {
        self.picturesFolder = picturesFolder
        self.videosFolder = videosFolder
    }

    /// The user's library: `CAPTURE_PICTURES_DIR` / `CAPTURE_VIDEOS_DIR` when set, else the XDG user
    /// directories (`XDG_PICTURES_DIR` / `XDG_VIDEOS_DIR` in the environment or in
    /// `$XDG_CONFIG_HOME/user-dirs.dirs`), else `$HOME/Pictures` and `$HOME/Videos`.
    public static func user(environment: [String: String] = ProcessInfo.processInfo.environment) -> MediaLibrary {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(home)/.config"
        let userDirs = (try? String(contentsOfFile: "\(configHome)/user-dirs.dirs", encoding: .utf8)).map { parseUserDirs($0, home: home) } ?? [:]
        func folder(_ override: String, _ xdg: String, _ fallback: String) -> String {
            if let value = environment[override], !value.isEmpty { return value }
            if let value = environment[xdg], !value.isEmpty { return value }
            if let value = userDirs[xdg], !value.isEmpty, value != home { return value }
            return "\(home)/\(fallback)"
        }
        return MediaLibrary(
            picturesFolder: folder("CAPTURE_PICTURES_DIR", "XDG_PICTURES_DIR", "Pictures"),
            videosFolder: folder("CAPTURE_VIDEOS_DIR", "XDG_VIDEOS_DIR", "Videos"))
    }

    /// Reads `user-dirs.dirs` (`XDG_PICTURES_DIR="$HOME/Pictures"`): only `"$HOME/..."` and absolute
    /// paths, as xdg-user-dirs writes them; the file is never run as shell.
    static func parseUserDirs(_ text: String, home: String) -> [String: String] {
        var folders: [String: String] = [:]
        // Lines at the newline scalar ("\r\n" is one Character), a CRLF file's "\r" trimmed.
        for line in text.unicodeScalars.split(separator: "\n") {
            let trimmed = String(line).trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = String(trimmed[..<equals])
            var value = String(trimmed[trimmed.index(after: equals)...])
            guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { continue }
            value = String(value.dropFirst().dropLast())
            if value.hasPrefix("$HOME") { value = home + value.dropFirst(5) } else if !value.hasPrefix("/") { continue }
            folders[key] = value
        }
        return folders
    }

    // MARK: Items

    /// Whether an item is a photo or a video.
    public enum MediaKind: String, Sendable, CaseIterable {
        /// `photo`: a JPEG or PNG file of the pictures folder; `video`: an MP4, M4V, MOV, MKV or WebM file of the videos folder.
        case photo, video
    }

    /// One photo or video of the library.
    public struct Item: Sendable, Equatable {
        /// The file's path.
        public var path: String
        /// Whether the item is a photo or a video.
        public var kind: MediaKind
        /// Bytes on disk.
        public var size: Int64
        /// The width in pixels, when it could be read.
        public var width: Int?
        /// The height in pixels, when it could be read.
        public var height: Int?
        /// Seconds; videos only.
        public var duration: Double?
        /// When the file was last written (for a saved file: when it was saved).
        public var date: Date

        /// The file's URL.
        public var url: URL { URL(fileURLWithPath: path) }
    }

    static let photoExtensions: Set<String> = ["jpg", "jpeg", "png"]
    static let videoExtensions: Set<String> = ["mp4", "m4v", "mov", "mkv", "webm"]

    /// The library's photos, videos or both, newest first (by modification time, then name). Files
    /// being saved (hidden temporaries) and files that are not photos or videos are left out.
    public func items(of kind: MediaKind? = nil) -> [Item] {
        files(of: kind).compactMap { Self.item(at: $0.path, kind: $0.kind) }
    }

    /// The regular files of the library, newest first, as `items(of:)` orders them: read with one
    /// `stat` each, nothing opened or probed.
    private func files(of kind: MediaKind?) -> [(path: String, kind: MediaKind, date: Date)] {
        var found: [(path: String, kind: MediaKind, date: Date)] = []
        for (folderKind, folder) in [(MediaKind.photo, picturesFolder), (.video, videosFolder)] where kind == nil || kind == folderKind {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names where !name.hasPrefix(".") {
                let ext = URL(fileURLWithPath: name).pathExtension.lowercased()
                guard (folderKind == .photo ? Self.photoExtensions : Self.videoExtensions).contains(ext) else { continue }
                var info = stat()
                let path = "\(folder)/\(name)"
                guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
                found.append((path, folderKind, Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)))
            }
        }
        return found.sorted { $0.date != $1.date ? $0.date > $1.date : $0.path > $1.path }
    }

    /// The newest item of a kind: what the picker's photo-library source offers first.
    public func newest(_ kind: MediaKind) -> Item? { files(of: kind).first.flatMap { Self.item(at: $0.path, kind: $0.kind) } }

    /// The item a user picks from the album, as the picker's photo-library source returns it
    /// (`UIImagePickerController` with `sourceType = .photoLibrary`): the one whose file name is `name`
    /// (in the Pictures folder for a photo, the Videos folder for a video), else the newest one; only
    /// photos or only videos when `kind` says so.
    /// - Throws: `libraryItemNotFound` naming what was asked for and the folders looked in (an empty
    ///   album, no item of that kind, no file of that name, a name with a `/` in it).
    ///
    /// Only the picked file is measured (a video probed): a pick costs one `stat` per file of the
    /// album, not one probe per video. `accept` leaves out files by their path before the choice (a
    /// remote caller's pick: the files whose real place is inside the album, not links leading out).
    public func pick(_ kind: MediaKind? = nil, named name: String? = nil, accepting accept: (String) -> Bool = { _ in true }) throws(CaptureError) -> Item {
        // `accept` is asked of the chosen file only (the first accepted, newest first), not of every one.
        let candidates = files(of: kind)
        let file =
            name.map { name in candidates.first { ($0.path as NSString).lastPathComponent == name && accept($0.path) } }
            ?? candidates.first { accept($0.path) }
        guard let found = file.flatMap({ Self.item(at: $0.path, kind: $0.kind) }) else {
            let folders = kind.map { [$0 == .photo ? picturesFolder : videosFolder] } ?? [picturesFolder, videosFolder]
            throw .libraryItemNotFound(kind: kind?.rawValue, name: name, folders: folders)
        }
        return found
    }

    /// Describes one file (nil when it is not a regular file). Photos are measured from their header,
    /// videos with GStreamer's discoverer.
    public static func item(at path: String, kind: MediaKind) -> Item? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let date = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        var item = Item(path: path, kind: kind, size: Int64(info.st_size), date: date)
        switch kind {
        case .photo:
            if let header = MediaFiles.head(path, bytes: 256 * 1024).flatMap(MediaFiles.imageHeader) {
                (item.width, item.height) = (header.width, header.height)
            }
        case .video:
            if let media = MediaInfo.discover(path) {
                if let video = media.video { (item.width, item.height) = video.displaySize }
                if media.duration > 0 && media.duration != UInt64.max { item.duration = media.durationSeconds }
            }
        }
        return item
    }

    // MARK: Saving

    /// Saves a photo the photo output took (`UIImageWriteToSavedPhotosAlbum`): its encoded bytes,
    /// as `IMG_0001.jpg` (the next free number) in the Pictures folder.
    public func save(photo: Photo) async throws(CaptureError) -> Item {
        let bytes = photo.fileDataRepresentation
        let ext = photo.resolvedSettings.codec.fileExtension
        return try await runBlocking("capture.library") { () throws(CaptureError) -> Item in try self.saveNow(photoBytes: bytes, extension: ext) }
    }

    /// Writes encoded photo bytes as the next free `IMG_NNNN.ext`, on the caller's thread.
    func saveNow(photoBytes bytes: [UInt8], extension ext: String) throws(CaptureError) -> Item {
        let path = try FileNaming.writeNew(bytes, to: "\(picturesFolder)/IMG_%04d.\(ext)")
        guard let item = Self.item(at: path, kind: .photo) else { throw .locationNotWritable(path: path, reason: "the saved file is gone") }
        return item
    }

    /// Saves encoded image bytes (JPEG or PNG) as `IMG_0001.jpg`/`.png`.
    public func save(photoData bytes: [UInt8]) async throws(CaptureError) -> Item {
        guard let header = MediaFiles.imageHeader(bytes) else {
            throw .notAMediaFile(path: "photo data", reason: "it is not a JPEG or PNG image")
        }
        return try await runBlocking("capture.library") { () throws(CaptureError) -> Item in
            try self.saveNow(photoBytes: bytes, extension: header.format == "png" ? "png" : "jpg")
        }
    }

    /// Copies a JPEG or PNG file into the Pictures folder under its own name (`name-1.jpg` when
    /// taken). The source is only read.
    public func save(photoAt path: String) async throws(CaptureError) -> Item {
        let folder = picturesFolder
        return try await runBlocking("capture.library") { () throws(CaptureError) -> Item in
            guard FileNaming.notARegularFile(path) == nil, FileManager.default.fileExists(atPath: path) else {
                throw .notAMediaFile(path: path, reason: FileNaming.notARegularFile(path).map { "it is \($0)" } ?? "no such file")
            }
            guard let header = MediaFiles.head(path).flatMap(MediaFiles.imageHeader) else {
                throw .notAMediaFile(path: path, reason: "it is not a JPEG or PNG image (or its header is cut short)")
            }
            let saved = try MediaFiles.copyNew(from: path, to: "\(folder)/\(Self.libraryName(path, format: header.format))")
            guard let item = Self.item(at: saved, kind: .photo) else { throw .locationNotWritable(path: saved, reason: "the saved file is gone") }
            return item
        }
    }

    /// Copies a video into the Videos folder under its own name, after `checkCompatible(videoAt:)`
    /// (`UISaveVideoAtPathToSavedPhotosAlbum`). The source is only read.
    public func save(videoAt path: String) async throws(CaptureError) -> Item {
        let folder = videosFolder
        return try await runBlocking("capture.library") { () throws(CaptureError) -> Item in
            let media = try Self.compatibility(path)
            let saved = try MediaFiles.copyNew(from: path, to: "\(folder)/\(URL(fileURLWithPath: path).lastPathComponent)")
            guard var item = Self.item(at: saved, kind: .video) else { throw .locationNotWritable(path: saved, reason: "the saved file is gone") }
            if item.duration == nil { item.duration = media.durationSeconds }
            return item
        }
    }

    /// Saves a photo or a video, by what the file is.
    public func save(fileAt path: String) async throws(CaptureError) -> Item {
        if MediaFiles.head(path).flatMap(MediaFiles.imageHeader) != nil { return try await save(photoAt: path) }
        return try await save(videoAt: path)
    }

    /// A photo's name in the library: its own, with the extension its format has.
    static func libraryName(_ path: String, format: String) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension.lowercased()
        let fits = format == "png" ? ext == "png" : ext == "jpg" || ext == "jpeg"
        return fits ? url.lastPathComponent : url.deletingPathExtension().lastPathComponent + (format == "png" ? ".png" : ".jpg")
    }

    // MARK: Compatibility

    /// True when the library takes the video (`UIVideoAtPathIsCompatibleWithSavedPhotosAlbum`).
    public func isCompatible(videoAt path: String) -> Bool {
        (try? Self.compatibility(path)) != nil
    }

    /// Why the library does not take a video: throws `notAMediaFile` (not media, truncated, no
    /// duration) or `videoNotCompatible` (container, codecs) naming the file and the cause.
    public func checkCompatible(videoAt path: String) throws(CaptureError) {
        _ = try Self.compatibility(path)
    }

    /// The containers and codecs the library takes: what this framework records and what a desktop
    /// player plays without extra codecs.
    static let containers = ["video/quicktime": "MP4/QuickTime", "video/x-matroska": "Matroska", "video/webm": "WebM"]
    static let videoCodecs = ["video/x-h264", "video/x-h265", "video/x-vp8", "video/x-vp9", "video/x-av1", "image/jpeg"]
    static let audioCodecs = ["audio/mpeg", "audio/x-opus", "audio/x-vorbis", "audio/x-flac"]

    static func compatibility(_ path: String) throws(CaptureError) -> MediaInfo {
        let media: MediaInfo
        do throws(CaptureError) {
            media = try MediaFiles.probe(path, needsVideo: true)
        } catch {
            if case .notAMediaFile(_, let reason) = error, reason == "it has no video stream" || reason == "it is a still image, not a video" {
                throw .videoNotCompatible(path: path, reason: reason)
            }
            throw error
        }
        guard let container = media.container, containers[container] != nil else {
            throw .videoNotCompatible(path: path, reason: "its container (\(media.container ?? "none")) is not MP4, QuickTime, Matroska or WebM")
        }
        guard let codec = media.video?.codec, videoCodecs.contains(codec) else {
            throw .videoNotCompatible(
                path: path, reason: "its video codec (\(media.video?.codec ?? "unknown")) is not H.264, H.265, VP8, VP9, AV1 or Motion JPEG")
        }
        if let audio = media.audio, !audioCodecs.contains(audio.codec ?? "") {
            throw .videoNotCompatible(path: path, reason: "its audio codec (\(audio.codec ?? "unknown")) is not AAC, MP3, Opus, Vorbis or FLAC")
        }
        // The header's duration is a promise: the data must keep it. A file cut short after its index
        // (a faststart MP4 truncated) describes its streams whole, yet its frames stop early.
        var size = stat()
        let bytes = stat(path, &size) == 0 ? Double(size.st_size) : 0
        let scanTimeout = Duration.seconds(30) + .seconds(bytes / 20e6)
        guard let end = MediaFiles.demuxedEnd(path, timeout: scanTimeout) else {
            throw .notAMediaFile(path: path, reason: "its data cannot be read to the end (truncated or damaged)")
        }
        // Half a second, or a twentieth of the length, of slack: streams end a frame or two apart.
        let slack = max(500_000_000, media.duration / 20)
        if end + slack < media.duration {
            throw .notAMediaFile(
                path: path,
                reason:
                    "it is truncated: its media ends at \(CaptureError.seconds(Double(end) / 1e9)) s of the \(CaptureError.seconds(media.durationSeconds)) s its header describes"
            )
        }
        return media
    }
}
