import Capture
import CaptureControl
import Foundation
import Testing

/// A scratch folder with an output folder inside, a file and a FIFO in it, links that lead out, and a
/// file outside it.
struct Scratch {
    let root: String
    var output: String { root + "/out" }
    var outside: String { root + "/elsewhere" }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("capture-control-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/out/sub", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/elsewhere", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: root + "/out/clip.mp4", contents: Data([0]))
        _ = FileManager.default.createFile(atPath: root + "/elsewhere/private.mp4", contents: Data([0]))
        try #require(mkfifo(root + "/out/fifo.mp4", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: root + "/out/away", withDestinationPath: root + "/elsewhere")
        try FileManager.default.createSymbolicLink(atPath: root + "/out/leak.mp4", withDestinationPath: root + "/elsewhere/private.mp4")
        try FileManager.default.createSymbolicLink(atPath: root + "/out/inside.mp4", withDestinationPath: root + "/out/clip.mp4")
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

@Suite("What remote callers may name")
struct RemoteAccessTests {
    func refusal(_ body: () throws(CaptureError) -> String) -> String? {
        do throws(CaptureError) {
            _ = try body()
            return nil
        } catch {
            return error.name
        }
    }

    @Test func remoteWritesStayInTheOutputFolder() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folders = SessionFolders(outputFolder: scratch.output)
        #expect(try folders.writeLocation("x.jpg", for: .remote) == scratch.output + "/x.jpg")
        #expect(try folders.writeLocation("sub/x.jpg", for: .remote) == scratch.output + "/sub/x.jpg")
        #expect(try folders.writeLocation("new/deeper/x.jpg", for: .remote) == scratch.output + "/new/deeper/x.jpg")
        #expect(try folders.writeLocation("clip.mp4", for: .remote) == scratch.output + "/clip.mp4")
        for hostile in [
            "/tmp/elsewhere/x.jpg", scratch.output + "/x.jpg", "../../x.jpg", "../x.jpg", "sub/../../x.jpg", "sub/../x.jpg", "",
            "away/x.jpg", "fifo.mp4", "leak.mp4", "a\u{1}b.jpg",
        ] {
            #expect(refusal { () throws(CaptureError) in try folders.writeLocation(hostile, for: .remote) } == "not-permitted", "\(hostile)")
        }
        // Nothing was made outside while checking.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.outside) == ["private.mp4"])
    }

    @Test func remoteReadsAreRegularFilesInTheFolderOrAllowed() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let allowed = scratch.outside + "/private.mp4"
        let folders = SessionFolders(outputFolder: scratch.output, remote: RemoteAccess(inputFiles: [allowed]))
        #expect(try folders.readLocation("clip.mp4", for: .remote) == scratch.output + "/clip.mp4")
        #expect(try folders.readLocation("inside.mp4", for: .remote) == scratch.output + "/inside.mp4")
        #expect(try folders.readLocation(allowed, for: .remote) == allowed)
        for hostile in ["/etc/hostname", "../elsewhere/private.mp4", "leak.mp4", "away/private.mp4", "fifo.mp4", "missing.mp4", "sub", ""] {
            #expect(refusal { () throws(CaptureError) in try folders.readLocation(hostile, for: .remote) } == "not-permitted", "\(hostile)")
        }
        // A local caller (the user's own file) names what it likes, relative to the output folder.
        #expect(try folders.readLocation("/etc/hostname", for: .local) == "/etc/hostname")
        #expect(try folders.writeLocation("../x.jpg", for: .local) == scratch.output + "/../x.jpg")
    }

    @Test func theAlbumIsReadByTheGallerysNamesOnlyWhenServed() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let album = MediaLibrary(picturesFolder: scratch.root + "/Pictures", videosFolder: scratch.root + "/Videos")
        try FileManager.default.createDirectory(atPath: album.videosFolder, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: album.videosFolder + "/VID_0001.mp4", contents: Data([0]))
        let served = SessionFolders(outputFolder: scratch.output, remote: RemoteAccess(album: album))
        #expect(try served.readLocation("album-videos/VID_0001.mp4", for: .remote) == album.videosFolder + "/VID_0001.mp4")
        #expect(refusal { () throws(CaptureError) in try served.readLocation("album-videos/../../elsewhere/private.mp4", for: .remote) } == "not-permitted")
        let unserved = SessionFolders(outputFolder: scratch.output)
        #expect(refusal { () throws(CaptureError) in try unserved.readLocation("album-videos/VID_0001.mp4", for: .remote) } == "not-permitted")
    }

    @Test func builtPathsAreCheckedToo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folders = SessionFolders(outputFolder: scratch.output)
        try folders.checkRemote(path: scratch.output + "/IMG_%04d.jpg", writing: true)
        try folders.checkRemote(path: scratch.output + "/clip.mp4", writing: false)
        for (path, writing) in [
            (scratch.output + "/../x.jpg", true), ("/tmp/x.jpg", true), (scratch.output + "/away/x.jpg", true),
            (scratch.outside + "/private.mp4", false), (scratch.output + "/leak.mp4", false), ("relative.jpg", true),
        ] {
            #expect(
                refusal { () throws(CaptureError) in
                    try folders.checkRemote(path: path, writing: writing); return ""
                } == "not-permitted", "\(path)")
        }
    }

    @Test func repliesNameFilesInTheFolderOnly() {
        let folders = SessionFolders(outputFolder: "/srv/media")
        #expect(folders.name(of: "/srv/media/IMG_0001.jpg") == "IMG_0001.jpg")
        #expect(folders.name(of: "/srv/media/sub/a.mp4") == "sub/a.mp4")
        #expect(folders.name(of: "/home/u/Pictures/IMG_0002.jpg") == "IMG_0002.jpg")
    }
}
