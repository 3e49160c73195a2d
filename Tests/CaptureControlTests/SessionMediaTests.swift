import Capture
import CaptureControl
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Makes a fixture with GStreamer's own command-line tool (independent of the project's code).
func gstLaunch(_ elements: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["gst-launch-1.0", "-q"] + elements
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CaptureError.pipelineBuildFailed(object: "fixture", reason: elements.joined(separator: " ")) }
}

/// A 640x480 JPEG made by gst-launch-1.0.
func makePhoto(_ path: String, width: Int = 640, height: Int = 480) throws {
    try gstLaunch([
        "videotestsrc", "num-buffers=1", "!", "video/x-raw,width=\(width),height=\(height)", "!", "jpegenc", "!", "filesink", "location=\(path)",
    ])
}

/// A 2 s H.264 MP4 of 320x240 at 30 fps made by gst-launch-1.0.
func makeClip(_ path: String) throws {
    try gstLaunch([
        "videotestsrc", "num-buffers=60", "!", "video/x-raw,width=320,height=240,framerate=30/1", "!", "x264enc", "speed-preset=ultrafast", "!",
        "mp4mux", "!", "filesink", "location=\(path)",
    ])
}

/// Width and height of an image as ImageMagick's `identify` reads them.
func identify(_ path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["identify", "-format", "%wx%h", path]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

/// The camera roll's commands on the controller: listing, picking, the crop step and preview frames;
/// every refusal a remote caller can meet. No session runs: these commands need only the folders.
@Suite("The session's media: pick, crop, preview frames")
struct SessionMediaTests {
    func controller(_ scratch: Scratch, album: MediaLibrary? = nil) -> SessionController {
        SessionController(
            session: CaptureSession(name: "media-test"), folders: SessionFolders(outputFolder: scratch.output, remote: RemoteAccess(album: album)))
    }

    /// The name of the `CaptureError` the work threw (nil: none).
    func failure(_ work: () async throws -> Void) async -> String? {
        do {
            try await work()
            return nil
        } catch {
            return (error as? CaptureError)?.name ?? "\(error)"
        }
    }

    /// Every file under a folder (links not followed), for "nothing was written" checks.
    func tree(_ folder: String) -> [String] {
        (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).sorted()
    }

    func touch(_ path: String, ageSeconds: Double) {
        let time = Date().addingTimeInterval(-ageSeconds)
        try? FileManager.default.setAttributes([.modificationDate: time], ofItemAtPath: path)
    }

    @Test func theListHoldsTheFoldersPhotosAndVideosByKindAndOrder() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let album = MediaLibrary(picturesFolder: scratch.root + "/Pictures", videosFolder: scratch.root + "/Videos")
        for folder in [album.picturesFolder, album.videosFolder] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let files = [
            ("b.jpg", 30.0), ("sub/a.png", 20), ("c.mp4", 10), (".hidden.jpg", 5), ("notes.txt", 5),
        ]
        for (name, age) in files {
            _ = FileManager.default.createFile(atPath: scratch.output + "/" + name, contents: Data([1, 2, 3]))
            touch(scratch.output + "/" + name, ageSeconds: age)
        }
        _ = FileManager.default.createFile(atPath: scratch.output + "/empty.jpg", contents: Data())
        _ = FileManager.default.createFile(atPath: album.picturesFolder + "/IMG_0001.jpg", contents: Data([1]))
        touch(album.picturesFolder + "/IMG_0001.jpg", ageSeconds: 1)
        _ = FileManager.default.createFile(atPath: album.videosFolder + "/holiday.mp4", contents: Data([1]))
        touch(album.videosFolder + "/holiday.mp4", ageSeconds: 40)
        // The scratch's clip.mp4 (1 byte) is listed; its links, the FIFO, hidden, empty and other files are not.
        touch(scratch.output + "/clip.mp4", ageSeconds: 15)
        let plain = await controller(scratch).mediaItems()
        #expect(plain.map(\.name) == ["c.mp4", "clip.mp4", "sub/a.png", "b.jpg"])
        #expect(plain.allSatisfy { !$0.inAlbum })

        let withAlbum = controller(scratch, album: album)
        let newest = await withAlbum.mediaItems()
        #expect(newest.map(\.name) == ["album-photos/IMG_0001.jpg", "c.mp4", "clip.mp4", "sub/a.png", "b.jpg", "album-videos/holiday.mp4"])
        #expect(newest.first?.inAlbum == true && newest.first?.kind == .photo)
        let byName = await withAlbum.mediaItems(MediaQuery(order: .name))
        #expect(byName.map(\.name) == ["b.jpg", "c.mp4", "clip.mp4", "sub/a.png", "album-photos/IMG_0001.jpg", "album-videos/holiday.mp4"])
        let videos = await withAlbum.mediaItems(MediaQuery(kind: .video, limit: 2))
        #expect(videos.map(\.name) == ["c.mp4", "clip.mp4"])
        #expect(MediaQuery(limit: 0).limit == 1 && MediaQuery(limit: 1 << 40).limit == MediaQuery.maximumLimit)
    }

    /// pick-from-library from the network: only a file of the album the session lets remote callers
    /// read, whatever the name sent; no album, no pick; and the names a caller makes up are bounded.
    @Test func remotePicksFromTheAlbumAreConfinedAndBounded() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let album = MediaLibrary(picturesFolder: scratch.root + "/Pictures", videosFolder: scratch.root + "/Videos")
        for folder in [album.picturesFolder, album.videosFolder] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        try makeClip(album.videosFolder + "/holiday.mp4")
        try makePhoto(scratch.output + "/photo.jpg")
        // A link in the album to a video outside it, newer than the album's own video.
        try makeClip(scratch.outside + "/private.mp4")
        try FileManager.default.createSymbolicLink(atPath: album.videosFolder + "/link.mp4", withDestinationPath: scratch.outside + "/private.mp4")
        let remote = controller(scratch, album: album)

        let picked = try await remote.perform(.pickFromLibrary(LibraryPick(name: "clip", kind: .video)), as: .remote)
        guard case .picked(let name, let item) = picked else { throw CaptureError.notRunning(object: "no pick: \(picked)") }
        #expect(name == "clip" && item.path == album.videosFolder + "/holiday.mp4" && abs((item.duration ?? 0) - 2) < 0.1)
        // Names that leave the album (a link to a file outside it too: the newest video above was not
        // the link), or name what is not in it, find nothing.
        for file in ["../../etc/passwd", "/etc/passwd", "../Pictures/../Videos/holiday.mp4", scratch.output + "/photo.jpg", "photo.jpg", "", "link.mp4"] {
            #expect(
                await failure { _ = try await remote.perform(.pickFromLibrary(LibraryPick(name: "x", file: file)), as: .remote) } == "library-item-not-found",
                "\(file)")
        }
        // The refusal does not say where the album's folders are.
        let refusal = try await #require(throws: CaptureError.self) {
            _ = try await remote.perform(.pickFromLibrary(LibraryPick(name: "x", file: "none.mp4")), as: .remote)
        }
        #expect(!refusal.description.contains(scratch.root) && refusal.description.contains("album-videos/"), "\(refusal)")
        // A session that gives remote callers no album gives them no pick.
        #expect(await failure { _ = try await controller(scratch).perform(.pickFromLibrary(LibraryPick(name: "x")), as: .remote) } == "not-permitted")
        // Made-up names are kept up to a bound: the oldest is forgotten.
        for index in 0..<(SessionController.maximumPicks + 6) {
            _ = try await remote.perform(.pickFromLibrary(LibraryPick(name: "n\(index)", kind: .video)), as: .remote)
        }
        #expect(remote.picked("clip") == nil && remote.picked("n5") == nil)
        #expect(remote.picked("n6") != nil && remote.picked("n\(SessionController.maximumPicks + 5)") != nil)
    }

    @Test func aPickedItemIsDescribedAndRemoteNamesAreConfined() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let album = MediaLibrary(picturesFolder: scratch.root + "/Pictures", videosFolder: scratch.root + "/Videos")
        try FileManager.default.createDirectory(atPath: album.picturesFolder, withIntermediateDirectories: true)
        try makePhoto(scratch.output + "/photo.jpg")
        try makeClip(scratch.output + "/sub/take.mp4")
        try makePhoto(album.picturesFolder + "/IMG_0001.jpg", width: 320, height: 240)
        let controller = controller(scratch, album: album)

        let photo = try await controller.pickMedia("photo.jpg", as: .remote)
        #expect(photo.kind == .photo && photo.width == 640 && photo.height == 480 && photo.name == "photo.jpg")
        let video = try await controller.pickMedia("sub/take.mp4", as: .remote)
        #expect(video.kind == .video && video.width == 320)
        #expect(abs((video.duration ?? 0) - 2) < 0.1)
        let albumPhoto = try await controller.pickMedia("album-photos/IMG_0001.jpg", as: .remote)
        #expect(albumPhoto.inAlbum && albumPhoto.width == 320 && albumPhoto.name == "album-photos/IMG_0001.jpg")
        // A local caller names the album the same way, and any path.
        #expect(try await controller.pickMedia("album-photos/IMG_0001.jpg").path == album.picturesFolder + "/IMG_0001.jpg")
        #expect(try await controller.pickMedia(scratch.output + "/photo.jpg").name == "photo.jpg")

        let refused = [
            "../elsewhere/private.mp4", scratch.outside + "/private.mp4", "leak.mp4", "away/private.mp4", "fifo.mp4", "missing.jpg", "sub",
            "album-photos/../../elsewhere/private.mp4", "",
        ]
        for name in refused {
            #expect(await failure { _ = try await controller.pickMedia(name, as: .remote) } == "not-permitted", "\(name)")
        }
        _ = FileManager.default.createFile(atPath: scratch.output + "/notes.txt", contents: Data("x".utf8))
        #expect(await failure { _ = try await controller.pickMedia("notes.txt", as: .remote) } == "not-a-media-file")
        // A link inside the folder to a file inside it is that file.
        #expect(try await controller.pickMedia("inside.mp4", as: .remote).size == 1)
    }

    @Test func theCropStepGivesTheOriginalUntouchedAndANewEditedFile() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try makePhoto(scratch.output + "/photo.jpg")
        let before = try Data(contentsOf: URL(fileURLWithPath: scratch.output + "/photo.jpg"))
        let controller = controller(scratch)
        let quarter = NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5)

        let first = try await controller.editImage(ImageEditRequest(source: "photo.jpg", crop: quarter), as: .remote)
        #expect(first.original.name == "photo.jpg" && first.original.width == 640 && first.original.height == 480)
        #expect(first.edited.name == "photo-edited.jpg" && first.edited.width == 320 && first.edited.height == 240)
        #expect((first.cropX, first.cropY, first.cropWidth, first.cropHeight) == (160, 120, 320, 240))
        #expect(try identify(scratch.output + "/photo-edited.jpg") == "320x240")
        #expect(try identify(scratch.output + "/photo.jpg") == "640x480")
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.output + "/photo.jpg")) == before)
        // Again: a new file, never the first one replaced; a PNG where asked, scaled to fit the size.
        let second = try await controller.editImage(ImageEditRequest(source: "photo.jpg", crop: quarter), as: .remote)
        #expect(second.edited.name == "photo-edited-1.jpg")
        let png = try await controller.editImage(
            ImageEditRequest(source: "photo.jpg", crop: .full, size: Size(width: 160, height: 160), location: "sub/small.png"), as: .remote)
        #expect(png.edited.name == "sub/small.png" && png.edited.width == 160 && png.edited.height == 120)
        #expect(try identify(scratch.output + "/sub/small.png") == "160x120")
    }

    @Test func theCropStepRefusesWhatARemoteCallerMayNotNameAndWritesNothing() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try makePhoto(scratch.output + "/photo.jpg")
        try makePhoto(scratch.outside + "/private.jpg")
        try FileManager.default.createSymbolicLink(atPath: scratch.output + "/secret.jpg", withDestinationPath: scratch.outside + "/private.jpg")
        try FileManager.default.createSymbolicLink(atPath: scratch.output + "/taken.jpg", withDestinationPath: scratch.outside + "/target.jpg")
        let controller = controller(scratch)
        let crop = NormalizedRect(x: 0, y: 0, width: 0.5, height: 0.5)
        let before = tree(scratch.root)
        let refusals: [(ImageEditRequest, String)] = [
            (ImageEditRequest(source: "../elsewhere/private.jpg", crop: crop), "not-permitted"),
            (ImageEditRequest(source: scratch.outside + "/private.jpg", crop: crop), "not-permitted"),
            (ImageEditRequest(source: "secret.jpg", crop: crop), "not-permitted"),
            (ImageEditRequest(source: "away/private.mp4", crop: crop), "not-permitted"),
            (ImageEditRequest(source: "missing.jpg", crop: crop), "not-permitted"),
            (ImageEditRequest(source: "fifo.mp4", crop: crop), "not-permitted"),
            (ImageEditRequest(source: "photo.jpg", crop: crop, location: "../out.jpg"), "not-permitted"),
            (ImageEditRequest(source: "photo.jpg", crop: crop, location: scratch.outside + "/out.jpg"), "not-permitted"),
            (ImageEditRequest(source: "photo.jpg", crop: crop, location: "away/out.jpg"), "not-permitted"),
            (ImageEditRequest(source: "photo.jpg", crop: crop, location: "taken.jpg"), "not-permitted"),
            (ImageEditRequest(source: "photo.jpg", crop: crop, location: "out.gif"), "invalid-location"),
            (ImageEditRequest(source: "photo.jpg", crop: crop, location: "out%s.jpg"), "invalid-location"),
            (ImageEditRequest(source: "clip.mp4", crop: crop), "not-a-media-file"),
            (ImageEditRequest(source: "photo.jpg", crop: NormalizedRect(x: 0.8, y: 0, width: 0.5, height: 1)), "invalid-photo-settings"),
            (ImageEditRequest(source: "photo.jpg", crop: NormalizedRect(x: 0, y: 0, width: 0.01, height: 0.01)), "invalid-photo-settings"),
        ]
        for (request, expected) in refusals {
            #expect(await failure { _ = try await controller.editImage(request, as: .remote) } == expected, "\(request)")
        }
        #expect(tree(scratch.root) == before)
    }

    @Test func previewFramesAreImagesInMemoryOnly() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try makeClip(scratch.output + "/take.mp4")
        let controller = controller(scratch)
        let before = tree(scratch.root)
        let frames = try await controller.videoFrames(
            of: .file("take.mp4"), at: [.seconds(0.5), .seconds(1.5)], maximumSize: Size(width: 160, height: 160), as: .remote)
        #expect(frames.count == 2)
        #expect(frames.allSatisfy { $0.width == 160 && $0.height == 120 && Array($0.data.prefix(2)) == [0xFF, 0xD8] && $0.location == nil })
        #expect(abs(frames[1].actualTime - 1.5) < 0.04)
        #expect(tree(scratch.root) == before)
        for source in ["../elsewhere/private.mp4", "leak.mp4", "fifo.mp4", scratch.outside + "/private.mp4", "missing.mp4"] {
            #expect(await failure { _ = try await controller.videoFrames(of: .file(source), at: [.seconds(0)], as: .remote) } == "not-permitted")
        }
        #expect(await failure { _ = try await controller.videoFrames(of: .file("take.mp4"), at: [], as: .remote) } == "invalid-configuration")
        #expect(
            await failure {
                _ = try await controller.videoFrames(of: .file("take.mp4"), at: [.seconds(0)], maximumSize: Size(width: 1, height: 100_000), as: .remote)
            } == "invalid-configuration")
        #expect(await failure { _ = try await controller.videoFrames(of: .file("take.mp4"), at: [.seconds(9)], as: .remote) } == "time-out-of-range")
    }

    @Test func anAlbumPhotosEditGoesToTheOutputFolderAndTheAlbumIsUntouched() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let album = MediaLibrary(picturesFolder: scratch.root + "/Pictures", videosFolder: scratch.root + "/Videos")
        try FileManager.default.createDirectory(atPath: album.picturesFolder, withIntermediateDirectories: true)
        try makePhoto(album.picturesFolder + "/IMG_0001.jpg")
        let controller = controller(scratch, album: album)
        let edit = try await controller.editImage(
            ImageEditRequest(source: "album-photos/IMG_0001.jpg", crop: NormalizedRect(x: 0, y: 0, width: 0.5, height: 0.5)), as: .remote)
        #expect(edit.original.name == "album-photos/IMG_0001.jpg" && edit.original.inAlbum)
        #expect(edit.edited.name == "IMG_0001-edited.jpg" && !edit.edited.inAlbum && edit.edited.path == scratch.output + "/IMG_0001-edited.jpg")
        #expect(try FileManager.default.contentsOfDirectory(atPath: album.picturesFolder) == ["IMG_0001.jpg"])
        // Derived names: in the item's subfolder, an album's item in the output folder, never a pattern.
        let folders = controller.folders
        #expect(folders.derivedName(for: "sub/clip.mp4", suffix: "-trim", extension: "mp4") == "sub/clip-trim.mp4")
        #expect(folders.derivedName(for: "album-videos/clip.mov", suffix: "-1.00s", extension: "jpg") == "clip-1.00s.jpg")
        #expect(folders.derivedName(for: "IMG_%04d.jpg", suffix: "-edited", extension: "jpg") == "IMG__04d-edited.jpg")
        #expect(folders.derivedName(for: scratch.output + "/sub/a.png", suffix: "-edited", extension: "png") == "sub/a-edited.png")
    }

    @Test func aRemoteCallersErrorsNameNoFolder() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try makeClip(scratch.output + "/take.mp4")
        _ = FileManager.default.createFile(atPath: scratch.output + "/broken.jpg", contents: Data("not a JPEG".utf8))
        let controller = controller(scratch)
        func message(_ caller: ControlCaller, _ work: () async throws -> Void) async -> String {
            do {
                try await work()
                return ""
            } catch {
                return "\(error)"
            }
        }
        let remote: [(String, () async throws -> Void)] = [
            ("a frame past the end", { _ = try await controller.videoFrames(of: .file("take.mp4"), at: [.seconds(9)], as: .remote) }),
            ("a broken photo", { _ = try await controller.editImage(ImageEditRequest(source: "broken.jpg", crop: .full), as: .remote) }),
            (
                "a trim past the end",
                { try await controller.perform(.trim(VideoTrimRequest(source: .file("take.mp4"), from: 0, to: 9, location: "t.mp4")), as: .remote) }
            ),
            (
                "a thumbnail of a photo",
                { try await controller.perform(.thumbnail(VideoThumbnailRequest(source: .file("broken.jpg"), location: "t.jpg")), as: .remote) }
            ),
        ]
        for (what, work) in remote {
            let text = await message(.remote, work)
            #expect(!text.isEmpty && !text.contains(scratch.root), "\(what): \(text)")
            #expect(text.contains("take.mp4") || text.contains("broken.jpg"), "\(what) names the file as the caller knows it: \(text)")
        }
        // The program's own caller is told where the file is.
        let local = await message(.local) { _ = try await controller.videoFrames(of: .file("take.mp4"), at: [.seconds(9)]) }
        #expect(local.contains(scratch.output + "/take.mp4"))
    }

    @Test func previewImagesOfPhotosAndVideosAreMadeInMemory() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let album = MediaLibrary(picturesFolder: scratch.root + "/Pictures", videosFolder: scratch.root + "/Videos")
        try FileManager.default.createDirectory(atPath: album.videosFolder, withIntermediateDirectories: true)
        try makePhoto(scratch.output + "/photo.jpg")
        try makeClip(album.videosFolder + "/take.mp4")
        _ = FileManager.default.createFile(atPath: scratch.output + "/notes.txt", contents: Data("x".utf8))
        let controller = controller(scratch, album: album)
        let before = tree(scratch.root)
        let photo = try await controller.previewImage(of: "photo.jpg", as: .remote)
        #expect((photo.width, photo.height, photo.time) == (320, 240, nil) && Array(photo.data.prefix(2)) == [0xFF, 0xD8])
        let video = try await controller.previewImage(of: "album-videos/take.mp4", maximumSize: Size(width: 160, height: 160), as: .remote)
        #expect((video.width, video.height, video.time) == (160, 120, 0))
        // A local caller names the album the same way.
        #expect(try await controller.previewImage(of: "album-videos/take.mp4").width == 320)
        #expect(tree(scratch.root) == before)
        let refusals: [(String, Size, String)] = [
            ("../elsewhere/private.mp4", Size(width: 320, height: 320), "not-permitted"),
            (scratch.outside + "/private.mp4", Size(width: 320, height: 320), "not-permitted"),
            ("leak.mp4", Size(width: 320, height: 320), "not-permitted"),
            ("fifo.mp4", Size(width: 320, height: 320), "not-permitted"),
            ("missing.jpg", Size(width: 320, height: 320), "not-permitted"),
            ("notes.txt", Size(width: 320, height: 320), "not-a-media-file"),
            ("photo.jpg", Size(width: 8, height: 320), "invalid-configuration"),
            ("photo.jpg", Size(width: 320, height: 100_000), "invalid-configuration"),
        ]
        for (name, size, expected) in refusals {
            #expect(await failure { _ = try await controller.previewImage(of: name, maximumSize: size, as: .remote) } == expected, "\(name)")
        }
    }
}
