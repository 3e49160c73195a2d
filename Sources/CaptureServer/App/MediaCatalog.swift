import CaptureControl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A photo or movie the web app lists in its gallery.
public struct MediaItem: Sendable, Hashable {
    /// What it is.
    public enum Kind: String, Sendable, Hashable {
        /// The kinds: `photo` (a `.jpg`, `.jpeg` or `.png` file) and `movie` (a `.mp4`, `.m4v`, `.mkv`, `.webm`
        /// or `.mov` file).
        case photo, movie
    }
    /// Its id in the catalog: for a folder, the path relative to it (`IMG_0001.jpg`, `stills/0003.png`).
    public var id: String
    /// Whether it is a photo or a movie.
    public var kind: Kind
    /// Bytes.
    public var size: Int64
    /// When it was last written.
    public var modified: Date

    /// An item of the catalog.
    /// - Parameters:
    ///   - id: Its id in the catalog.
    ///   - kind: Photo or movie.
    ///   - size: Its size in bytes.
    ///   - modified: When it was last written.
    public init(id: String, kind: Kind, size: Int64, modified: Date) {
        self.id = id
        self.kind = kind
        self.size = size
        self.modified = modified
    }

    /// The item's kind from a file name's extension (nil: not a photo or movie).
    public static func kind(ofFile name: String) -> Kind? {
        MediaScan.kind(ofFile: name).map { $0 == .photo ? .photo : .movie }
    }

    /// The MIME type a browser is given.
    public var contentType: String {
        switch (id as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "mp4", "m4v": "video/mp4"
        case "mkv": "video/x-matroska"
        case "webm": "video/webm"
        case "mov": "video/quicktime"
        default: "application/octet-stream"
        }
    }
}

/// Why a media file cannot be handed out.
public enum MediaAccessError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The id names something outside the catalog (`..`, an absolute path, a symbolic link leading out).
    case outside(String)
    /// Nothing of that id (or not a photo or movie).
    case notFound(String)
    /// The id names something in the folder that is not a regular file (a FIFO, a device, a socket, a
    /// folder): never opened.
    case notRegularFile(String)

    /// A stable kebab-case name (the `error` of the web server's answer).
    public var name: String {
        switch self {
        case .outside: "outside-media-folder"
        case .notFound: "not-found"
        case .notRegularFile: "not-a-regular-file"
        }
    }

    /// A sentence naming the id and what is wrong with it.
    public var description: String {
        switch self {
        case .outside(let id): "'\(id)' is not inside the media folder"
        case .notFound(let id): "no photo or movie '\(id)'"
        case .notRegularFile(let id): "'\(id)' is not a regular file (a FIFO, a device or a folder is never served)"
        }
    }
}

/// Where the gallery's photos and movies come from. The web app needs only this: a list, newest first,
/// and an open file for an id that it checked. `FolderMediaCatalog` reads the session's output folder;
/// the media library (`MediaLibrary`, issue #16) can stand behind the same protocol.
public protocol MediaCatalog: Sendable {
    /// Up to `limit` items, newest first.
    func items(limit: Int) -> [MediaItem]
    /// The item of that id, and its file opened for reading (the caller closes the descriptor).
    func open(_ id: String) throws(MediaAccessError) -> (item: MediaItem, descriptor: Int32)
}

/// The photos and movies in a folder (and its subfolders, two levels down): what a session saved into
/// its output folder. Nothing outside the folder is ever listed or opened: ids with `..`, `.`, empty
/// or absolute parts are refused, and the file opened must resolve (symbolic links followed) to a path
/// inside the folder's own resolved path; symbolic links are not listed. Only regular files are listed
/// or opened: a FIFO (whose `open` would wait for a writer), a device or a socket never is.
public struct FolderMediaCatalog: MediaCatalog {
    /// The folder listed, as given.
    public let root: String
    /// How deep subfolders are listed (0: the folder alone).
    public var depth = 2
    /// The most directory entries read while listing, so that a huge folder cannot stall a request.
    public var scanLimit = 20_000

    /// The photos and movies in `root`, listed two levels of subfolders down.
    public init(root: String) { self.root = root }

    /// Up to `limit` photos and movies of the folder, newest first: regular, non-empty files with a photo
    /// or movie extension, hidden names and symbolic links left out. At most `scanLimit` entries are read.
    public func items(limit: Int) -> [MediaItem] {
        let found = MediaScan.files(in: root, depth: depth, scanLimit: scanLimit).map { file in
            MediaItem(id: file.name, kind: file.kind == .photo ? .photo : .movie, size: file.size, modified: file.modified)
        }
        return Array(found.sorted { ($0.modified, $0.id) > ($1.modified, $1.id) }.prefix(limit))
    }

    /// The item of that id and its file opened for reading; the caller closes the descriptor.
    /// - Parameter id: A path relative to the folder (`IMG_0001.jpg`, `stills/0003.png`).
    /// - Throws: `MediaAccessError.outside` for an id with `..`, `.`, empty or absolute parts, or whose file
    ///   resolves (symbolic links followed) to a path outside the folder; `MediaAccessError.notFound` when
    ///   there is no photo or movie file of that id; `MediaAccessError.notRegularFile` when it is there but
    ///   is not a regular file (checked before it is opened, without waiting, and again once it is open).
    public func open(_ id: String) throws(MediaAccessError) -> (item: MediaItem, descriptor: Int32) {
        let parts = id.split(separator: "/", omittingEmptySubsequences: false)
        guard !id.isEmpty, !id.hasPrefix("/"), !id.contains("\\"), !id.contains("\0"),
            parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })
        else { throw .outside(id) }
        guard let kind = MediaItem.kind(ofFile: id) else { throw .notFound(id) }
        guard let base = realpath(root, nil) else { throw .notFound(id) }
        let rootPath = String(cString: base)
        free(base)
        let candidate = (rootPath as NSString).appendingPathComponent(id)
        guard let resolvedPointer = realpath(candidate, nil) else { throw .notFound(id) }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        guard resolved.hasPrefix(rootPath.hasSuffix("/") ? rootPath : rootPath + "/") else { throw .outside(id) }
        // Only a regular file is opened: opening a FIFO for reading waits until something opens it for
        // writing, and a device can be anything.
        var found = stat()
        guard lstat(resolved, &found) == 0 else { throw .notFound(id) }
        guard found.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(id) }
        // Should something else take its place now: O_NONBLOCK, a FIFO's open returns at once (and fstat
        // refuses it); O_NOFOLLOW, the resolved path has no link left, a new one is refused.
        let descriptor = Glibc.open(resolved, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw .notFound(id) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .notRegularFile(id)
        }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec))
        return (MediaItem(id: id, kind: kind, size: Int64(info.st_size), modified: modified), descriptor)
    }
}

/// Several folders in one gallery, each under a name: ids are `NAME/PATH` (the first folder's name may
/// be empty: its ids are plain paths). Each folder keeps its own confinement: an id opens a file inside
/// the folder its name says, or nothing. `capture serve --library` shows the session's output folder
/// and the saved photos album (`MediaLibrary`'s Pictures and Videos folders) this way.
public struct CombinedMediaCatalog: MediaCatalog {
    /// The folders, each under its name (an empty name: ids are plain paths).
    public let folders: [(name: String, catalog: FolderMediaCatalog)]

    /// A catalog of these folders, each under its name.
    public init(folders: [(name: String, catalog: FolderMediaCatalog)]) { self.folders = folders }

    /// The output folder, then the album's Pictures and Videos folders as `album-photos/` and
    /// `album-videos/` (each left out when it is the output folder itself or does not exist).
    public init(outputFolder: String, albumPictures: String, albumVideos: String) {
        var folders: [(name: String, catalog: FolderMediaCatalog)] = [("", FolderMediaCatalog(root: outputFolder))]
        let output = URL(fileURLWithPath: outputFolder).standardizedFileURL.path
        for (name, path) in [("album-photos", albumPictures), ("album-videos", albumVideos)] {
            var isFolder: ObjCBool = false
            let standard = URL(fileURLWithPath: path).standardizedFileURL.path
            guard standard != output, FileManager.default.fileExists(atPath: standard, isDirectory: &isFolder), isFolder.boolValue else { continue }
            var catalog = FolderMediaCatalog(root: standard)
            catalog.depth = 0
            folders.append((name, catalog))
        }
        self.folders = folders
    }

    /// Up to `limit` items of all the folders, newest first, ids prefixed with their folder's name.
    public func items(limit: Int) -> [MediaItem] {
        let all = folders.flatMap { folder in
            folder.catalog.items(limit: limit).map { item in
                var named = item
                if !folder.name.isEmpty { named.id = folder.name + "/" + item.id }
                return named
            }
        }
        return Array(all.sorted { ($0.modified, $0.id) > ($1.modified, $1.id) }.prefix(limit))
    }

    /// The item of that id and its file opened for reading, from the folder its name says (an id without
    /// a folder name: the unnamed folder); the caller closes the descriptor.
    /// - Parameter id: `NAME/PATH`, or a plain path for the unnamed folder.
    /// - Throws: `MediaAccessError.outside` when the id leaves its folder; `MediaAccessError.notFound` when
    ///   there is no such item (or no folder for it).
    public func open(_ id: String) throws(MediaAccessError) -> (item: MediaItem, descriptor: Int32) {
        for folder in folders where !folder.name.isEmpty && id.hasPrefix(folder.name + "/") {
            var (item, descriptor) = try folder.catalog.open(String(id.dropFirst(folder.name.count + 1)))
            item.id = id
            return (item, descriptor)
        }
        guard let plain = folders.first(where: { $0.name.isEmpty }) else { throw .notFound(id) }
        return try plain.catalog.open(id)
    }
}
