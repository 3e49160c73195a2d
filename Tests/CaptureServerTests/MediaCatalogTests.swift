import Foundation
import Testing

@testable import CaptureServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Media folder")
struct MediaCatalogTests {
    /// A media folder with photos, a movie, a nested photo, a text file, and links inside and outside.
    func makeFolder() throws -> (root: String, outside: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("capture-media-\(UUID().uuidString)").path
        let root = base + "/media", outside = base + "/secret"
        try FileManager.default.createDirectory(atPath: root + "/stills", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        for (index, name) in ["IMG_0001.jpg", "VID_0001.mp4", "stills/0001.png", "notes.txt"].enumerated() {
            try Data("x\(index)".utf8).write(to: URL(fileURLWithPath: root + "/" + name))
            var times = [timespec(tv_sec: 1_000_000 + index * 10, tv_nsec: 0), timespec(tv_sec: 1_000_000 + index * 10, tv_nsec: 0)]
            utimensat(AT_FDCWD, root + "/" + name, &times, 0)
        }
        try Data("secret".utf8).write(to: URL(fileURLWithPath: outside + "/key.jpg"))
        symlink(outside + "/key.jpg", root + "/link-out.jpg")
        symlink(outside, root + "/folder-out")
        symlink(root + "/IMG_0001.jpg", root + "/link-in.jpg")
        return (root, outside)
    }

    /// `capture serve --library`: the output folder and the album, each confined to itself.
    @Test func theAlbumIsListedBesideTheOutputFolderAndEachStaysConfined() throws {
        let (root, outside) = try makeFolder()
        let base = (root as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: base) }
        let pictures = base + "/Pictures", videos = base + "/Videos"
        try FileManager.default.createDirectory(atPath: pictures, withIntermediateDirectories: true)
        try Data("album".utf8).write(to: URL(fileURLWithPath: pictures + "/IMG_0100.jpg"))
        let catalog = CombinedMediaCatalog(outputFolder: root, albumPictures: pictures, albumVideos: videos)
        // The videos folder does not exist: left out.
        #expect(catalog.folders.map(\.name) == ["", "album-photos"])
        let ids = catalog.items(limit: 20).map(\.id)
        #expect(ids.first == "album-photos/IMG_0100.jpg" && ids.contains("IMG_0001.jpg") && ids.contains("stills/0001.png"))
        let (item, descriptor) = try catalog.open("album-photos/IMG_0100.jpg")
        close(descriptor)
        #expect(item.id == "album-photos/IMG_0100.jpg" && item.size == 5)
        let (plain, second) = try catalog.open("IMG_0001.jpg")
        close(second)
        #expect(plain.kind == .photo)
        for id in [
            "album-photos/../media/IMG_0001.jpg", "album-photos/../secret/key.jpg", "album-videos/x.mp4", "../secret/key.jpg",
            outside + "/key.jpg",
        ] {
            #expect(throws: MediaAccessError.self, "\(id)") { _ = try catalog.open(id) }
        }
    }

    @Test func listsPhotosAndMoviesNewestFirstAndNoLinks() throws {
        let (root, _) = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: (root as NSString).deletingLastPathComponent) }
        let items = FolderMediaCatalog(root: root).items(limit: 10)
        #expect(items.map(\.id) == ["stills/0001.png", "VID_0001.mp4", "IMG_0001.jpg"])
        #expect(items.map(\.kind) == [.photo, .movie, .photo])
        #expect(FolderMediaCatalog(root: root).items(limit: 1).count == 1)
    }

    @Test func opensOnlyWhatIsInside() throws {
        let (root, _) = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: (root as NSString).deletingLastPathComponent) }
        let catalog = FolderMediaCatalog(root: root)
        let (item, descriptor) = try catalog.open("stills/0001.png")
        close(descriptor)
        #expect(item.size == 2 && item.contentType == "image/png")
        let inside = try catalog.open("link-in.jpg")  // a link that stays inside is followed
        close(inside.descriptor)
        for id in [
            "../secret/key.jpg", "/etc/passwd.jpg", "stills/../../secret/key.jpg", "./IMG_0001.jpg", "stills//0001.png", "link-out.jpg",
            "folder-out/key.jpg", "a\\b.jpg",
        ] {
            #expect(throws: MediaAccessError.self, "\(id)") { try catalog.open(id) }
        }
        #expect(throws: MediaAccessError.notFound("notes.txt")) { try catalog.open("notes.txt") }
        #expect(throws: MediaAccessError.outside("link-out.jpg")) { try catalog.open("link-out.jpg") }
    }
}
