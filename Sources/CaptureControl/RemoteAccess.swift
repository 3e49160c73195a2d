import Capture
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Who asks the controller to act: the program itself (a `.pipeline` file the user wrote, the
/// terminal's keys, a Swift app) or a caller over the network (`capture serve`'s HTTP API, the MQTT
/// command topic). What arrives over a network is untrusted: the controller confines it
/// (`RemoteAccess`); a local caller may name any file the process can use, as the user can.
public enum ControlCaller: String, Sendable, Hashable {
    /// The program or its user: files resolve against the output folder, absolute paths as given.
    case local
    /// A network client: only what `RemoteAccess` allows.
    case remote
}

/// What a remote caller may name, decided by the operator when the session starts. The controller
/// applies it to every command a remote caller sends, whichever surface it came through:
///
/// - files written (photos, recordings, trims, thumbnails, an added output's location) only inside the
///   session's output folder, named relative to it: no absolute path, no `..`, no link that leads out,
///   and an existing file is replaced only when it is a regular file;
/// - files read (the video a trim or a thumbnail reads, an overlay's image, a `file:` input) only
///   regular files inside the output folder (or the album, when `album` is set), or a path on
///   `inputFiles`;
/// - a stream's destination only a URL on `streamURLs`;
/// - saving into the album only when `album` is set.
///
/// Refusals are `CaptureError.notPermitted` and happen before anything is opened or written.
public struct RemoteAccess: Sendable, Hashable {
    /// The album's folders remote callers may read from and save into (nil: none).
    public var album: MediaLibrary?
    /// Files (absolute paths) a remote caller may name as inputs, besides those in the output folder.
    public var inputFiles: [String]
    /// Stream URLs a remote `add-output, kind=stream` may serve or publish to.
    public var streamURLs: [StreamURL]
    /// A remote caller adds an input, an output or an overlay only while the session (or the output)
    /// has fewer than these: each costs the camera's work on every frame, so a caller who may send
    /// commands must not be able to grow it without bound.
    public var maximumInputs: Int, maximumOutputs: Int, maximumOverlaysPerOutput: Int

    /// A policy; by default nothing beyond the output folder, at most 4 inputs, 16 outputs and 8
    /// overlays on an output.
    public init(
        album: MediaLibrary? = nil, inputFiles: [String] = [], streamURLs: [StreamURL] = [], maximumInputs: Int = 4, maximumOutputs: Int = 16,
        maximumOverlaysPerOutput: Int = 8
    ) {
        self.album = album
        self.inputFiles = inputFiles.map { ($0 as NSString).standardizingPath }
        self.streamURLs = streamURLs
        self.maximumInputs = maximumInputs
        self.maximumOutputs = maximumOutputs
        self.maximumOverlaysPerOutput = maximumOverlaysPerOutput
    }

    /// Nothing beyond the output folder.
    public static let outputFolderOnly = RemoteAccess()
}

/// Where a session's files go and how the names callers give are turned into paths: relative names
/// against the output folder; for remote callers, through `RemoteAccess`.
public struct SessionFolders: Sendable, Hashable {
    /// The folder relative locations go to (absolute, standardized).
    public let outputFolder: String
    /// What remote callers may name.
    public var remote: RemoteAccess

    /// Folders for a session.
    /// - Parameters:
    ///   - outputFolder: Where relative locations go; made absolute against the current directory.
    ///   - remote: What remote callers may name (by default only the output folder).
    public init(outputFolder: String, remote: RemoteAccess = .outputFolderOnly) {
        let absolute = outputFolder.hasPrefix("/") ? outputFolder : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(outputFolder)
        self.outputFolder = (absolute as NSString).standardizingPath
        self.remote = remote
    }

    /// A location a command writes to, as a path. Local: relative against the output folder, absolute
    /// as given. Remote: relative only, inside the output folder (`notPermitted` otherwise).
    public func writeLocation(_ text: String, for caller: ControlCaller) throws(CaptureError) -> String {
        switch caller {
        case .local:
            return text.hasPrefix("/") ? text : (outputFolder as NSString).appendingPathComponent(text)
        case .remote:
            try Self.checkRelativeName(text)
            let path = (outputFolder as NSString).appendingPathComponent(text)
            try checkWritable(path, as: text)
            return path
        }
    }

    /// A file a command reads, as a path. Local: relative against the output folder. Remote: a regular
    /// file inside the output folder (or the album), or one of `RemoteAccess.inputFiles`.
    public func readLocation(_ text: String, for caller: ControlCaller) throws(CaptureError) -> String {
        switch caller {
        case .local:
            return text.hasPrefix("/") ? text : (outputFolder as NSString).appendingPathComponent(text)
        case .remote:
            if text.hasPrefix("/"), remote.inputFiles.contains((text as NSString).standardizingPath) { return text }
            try Self.checkRelativeName(text)
            var folder = outputFolder, name = text
            // The album's items by the names the served gallery gives them.
            if let album = remote.album {
                for (prefix, albumFolder) in [(Self.albumPhotos, album.picturesFolder), (Self.albumVideos, album.videosFolder)] where text.hasPrefix(prefix) {
                    folder = albumFolder
                    name = String(text.dropFirst(prefix.count))
                }
            }
            let path = (folder as NSString).appendingPathComponent(name)
            try checkReadable(path, as: text)
            return path
        }
    }

    /// Checks a path an output or an input built for a remote caller would use (already absolute).
    /// - Parameters:
    ///   - path: The absolute path.
    ///   - writing: True for a file written (output folder or album), false for one read (also
    ///     `RemoteAccess.inputFiles`).
    public func checkRemote(path: String, writing: Bool) throws(CaptureError) {
        if !writing, remote.inputFiles.contains((path as NSString).standardizingPath) { return }
        // The refusal names the file as the caller may know it (`name(of:)`): the error goes back to
        // the remote caller, and the folders' own paths stay the operator's.
        let given = name(of: path)
        guard path.hasPrefix("/"), !path.split(separator: "/").contains(where: { $0 == ".." }) else {
            throw .notPermitted(what: given, reason: "a path with '..' leads out of the session's folders")
        }
        if writing { try checkWritable(path, as: given) } else { try checkReadable(path, as: given) }
    }

    /// How remote callers name the album's photos and videos (`album-photos/IMG_0001.jpg`), as the
    /// served gallery lists them.
    public static let albumPhotos = "album-photos/", albumVideos = "album-videos/"

    /// A path as a remote caller names it: relative to the output folder when inside it, else the
    /// file's name only (a reply never tells a remote caller where the folders are).
    public func name(of path: String) -> String {
        let standard = (path as NSString).standardizingPath
        let prefix = outputFolder.hasSuffix("/") ? outputFolder : outputFolder + "/"
        return standard.hasPrefix(prefix) ? String(standard.dropFirst(prefix.count)) : (standard as NSString).lastPathComponent
    }

    /// The folders remote callers may use: the output folder, and the album's when allowed.
    var remoteRoots: [String] {
        [outputFolder] + (remote.album.map { [$0.picturesFolder, $0.videosFolder] } ?? [])
    }

    // MARK: Checks

    /// A name relative to the output folder: not empty, not absolute, no `..`, no control characters.
    static func checkRelativeName(_ text: String) throws(CaptureError) {
        guard !text.isEmpty else { throw .notPermitted(what: text, reason: "the name is empty") }
        guard !text.hasPrefix("/") else {
            throw .notPermitted(what: text, reason: "remote commands name files relative to the session's output folder, not by absolute path")
        }
        guard !text.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == ".." }) else {
            throw .notPermitted(what: text, reason: "'..' is not allowed in names remote commands give")
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) else {
            throw .notPermitted(what: text, reason: "the name holds control characters")
        }
    }

    /// A path to be written: its deepest existing folder lies inside a remote root once links are
    /// followed, and the file itself, when it exists, is a regular file (not a link, a FIFO, a device).
    func checkWritable(_ path: String, as given: String) throws(CaptureError) {
        // The session writes into its output folder anyway: made now, so that it can be compared.
        try? FileManager.default.createDirectory(atPath: outputFolder, withIntermediateDirectories: true)
        var folder = (path as NSString).deletingLastPathComponent
        while !folder.isEmpty, folder != "/", !Self.exists(folder) { folder = (folder as NSString).deletingLastPathComponent }
        guard let real = Self.realPath(folder), isInsideRemoteRoot(real) else {
            throw .notPermitted(what: given, reason: "it is outside the session's output folder (links are followed)")
        }
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            throw .notPermitted(what: given, reason: "it exists and is not a regular file")
        }
    }

    /// A path to be read: a regular file inside a remote root once links are followed.
    func checkReadable(_ path: String, as given: String) throws(CaptureError) {
        guard let real = Self.realPath(path) else { throw .notPermitted(what: given, reason: "no such file in the session's output folder") }
        guard isInsideRemoteRoot(real) else {
            throw .notPermitted(what: given, reason: "it is outside the session's output folder (links are followed)")
        }
        var info = stat()
        guard stat(real, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw .notPermitted(what: given, reason: "it is not a regular file")
        }
    }

    func isInsideRemoteRoot(_ real: String) -> Bool {
        remoteRoots.contains { root in
            guard let rootReal = Self.realPath(root) else { return false }
            return real == rootReal || real.hasPrefix(rootReal.hasSuffix("/") ? rootReal : rootReal + "/")
        }
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
