import Capture
import CaptureControl
import CaptureTestSupport
import Foundation
import Testing

@testable import CaptureServer

#if canImport(Glibc)
    import Glibc
#endif

/// The camera roll over HTTP on a running test-pattern session: the picker's list and pick, the crop
/// step, the trim editor's frames, trims and thumbnails; what each refuses, and that a refusal writes
/// nothing. Results are checked with independent tools (ImageMagick's identify, ffprobe).
@Suite("The web API's camera roll", .serialized)
struct CameraRollTests {
    /// Runs a tool to its end on a thread of its own; its standard output.
    func tool(_ arguments: [String]) async throws -> String {
        try await onThread {
            let result = try ChildProcess(arguments).finish()
            guard result.status == 0 else { throw TestFailure("\(arguments[0]) failed: \(result.error)") }
            return result.output
        }
    }

    /// A 2 s 320x240 H.264 MP4 at 30 fps, made by gst-launch-1.0 in the media folder.
    func makeClip(_ served: ServedSession, _ name: String) async throws {
        try FileManager.default.createDirectory(atPath: served.folder + "/media/clips", withIntermediateDirectories: true)
        _ = try await tool([
            "gst-launch-1.0", "-q", "videotestsrc", "num-buffers=60", "!", "video/x-raw,width=320,height=240,framerate=30/1", "!", "x264enc",
            "speed-preset=ultrafast", "!", "mp4mux", "!", "filesink", "location=\(served.folder)/media/\(name)",
        ])
    }

    /// A photo taken through the API; its name.
    func takePhoto(_ served: ServedSession) throws -> String {
        let answer = try request(served.port, "POST", "/api/photo")
        guard let name = (answer.json["photos"] as? [[String: Any]])?.first?["name"] as? String else { throw TestFailure(answer.text) }
        return name
    }

    /// Every path under the scratch folder, for "nothing was written" checks.
    func tree(_ served: ServedSession) -> [String] {
        (FileManager.default.enumerator(atPath: served.folder)?.allObjects as? [String] ?? []).sorted()
    }

    /// A trap outside the media folder, a link into it, a link to it, a FIFO.
    func plantTraps(_ served: ServedSession) throws {
        let media = served.folder + "/media"
        try FileManager.default.createDirectory(atPath: served.folder + "/trap", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: served.folder + "/trap/secret.jpg", contents: Data([0xFF, 0xD8, 0xFF]))
        try FileManager.default.createSymbolicLink(atPath: media + "/away", withDestinationPath: served.folder + "/trap")
        try FileManager.default.createSymbolicLink(atPath: media + "/secret.jpg", withDestinationPath: served.folder + "/trap/secret.jpg")
        #expect(mkfifo(media + "/fifo.mp4", 0o600) == 0)
    }

    func query(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }

    @Test func thePickerListsAndPicksWithinTheFolders() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        let photo = try takePhoto(served)
        try await makeClip(served, "clips/take.mp4")
        try plantTraps(served)

        let all = try request(served.port, "GET", "/api/picker")
        #expect(all.status == 200, "\(all.text)")
        let names = (all.json["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names == ["clips/take.mp4", photo])
        let videos = try request(served.port, "GET", "/api/picker?kind=video&order=name&limit=5").json["items"] as? [[String: Any]]
        #expect(videos?.map { $0["name"] as? String } == ["clips/take.mp4"])
        #expect(videos?.first?["url"] as? String == "/media/clips/take.mp4")
        for bad in ["kind=gif", "order=size", "limit=0", "limit=x"] {
            #expect(try request(served.port, "GET", "/api/picker?" + bad).status == 400, "\(bad)")
        }

        let picked = try request(served.port, "GET", "/api/picker/item?name=" + query(photo))
        let item = try #require(picked.json["item"] as? [String: Any], "\(picked.text)")
        #expect(item["kind"] as? String == "photo" && item["width"] as? Int == 352 && item["height"] as? Int == 288)
        let clip = try #require(try request(served.port, "GET", "/api/picker/item?name=clips/take.mp4").json["item"] as? [String: Any])
        #expect(clip["kind"] as? String == "video")
        #expect(abs((clip["duration"] as? Double ?? 0) - 2) < 0.1)

        let before = tree(served)
        for name in ["../trap/secret.jpg", served.folder + "/trap/secret.jpg", "secret.jpg", "away/secret.jpg", "fifo.mp4", "missing.jpg", "clips"] {
            let refused = try request(served.port, "GET", "/api/picker/item?name=" + query(name))
            #expect(refused.status == 403 && refused.json["error"] as? String == "not-permitted", "\(name): \(refused.text)")
            #expect(!refused.text.contains(served.folder), "a refusal names no folder")
        }
        // The grid's small images, made in memory.
        for (name, size) in [(photo, "240x196"), ("clips/take.mp4", "240x180")] {
            let preview = try request(served.port, "GET", "/api/picker/preview?size=240&name=" + query(name))
            #expect(preview.status == 200 && preview.headers["content-type"] == "image/jpeg", "\(name): \(preview.text)")
            let file = served.folder + "/preview.jpg"
            try Data(preview.body).write(to: URL(fileURLWithPath: file))
            #expect(try await tool(["identify", "-format", "%wx%h", file]) == size)
            try FileManager.default.removeItem(atPath: file)
        }
        for (target, status) in [
            ("/api/picker/preview?name=../trap/secret.jpg", 403), ("/api/picker/preview?name=secret.jpg", 403), ("/api/picker/preview?name=fifo.mp4", 403),
            ("/api/picker/preview?name=" + query(photo) + "&size=4", 400), ("/api/picker/preview", 400),
        ] {
            #expect(try request(served.port, "GET", target).status == status, "\(target)")
        }
        #expect(tree(served) == before)
        _ = FileManager.default.createFile(atPath: served.folder + "/media/notes.txt", contents: Data("x".utf8))
        #expect(try request(served.port, "GET", "/api/picker/item?name=notes.txt").status == 400)
        #expect(try request(served.port, "GET", "/api/picker/item").status == 400)
        #expect(try request(served.port, "POST", "/api/picker").status == 405)
        #expect(tree(served) == (before + ["media/notes.txt"]).sorted())
    }

    @Test func theCropStepAnswersWithTheOriginalAndTheEditedFile() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        let photo = try takePhoto(served)
        let original = served.folder + "/media/" + photo
        let bytes = try Data(contentsOf: URL(fileURLWithPath: original))

        let answer = try request(
            served.port, "POST", "/api/crop", body: #"{"source": "\#(photo)", "crop": {"x": 0.25, "y": 0.25, "width": 0.5, "height": 0.5}}"#)
        #expect(answer.status == 200, "\(answer.text)")
        let edited = try #require(answer.json["edited"] as? [String: Any])
        let originalItem = try #require(answer.json["original"] as? [String: Any])
        #expect(originalItem["name"] as? String == photo && originalItem["width"] as? Int == 352 && originalItem["height"] as? Int == 288)
        let editedName = try #require(edited["name"] as? String)
        #expect(editedName == (photo as NSString).deletingPathExtension + "-edited.jpg")
        #expect(edited["width"] as? Int == 176 && edited["height"] as? Int == 144)
        #expect(try await tool(["identify", "-format", "%wx%h", served.folder + "/media/" + editedName]) == "176x144")
        #expect(try await tool(["identify", "-format", "%wx%h", original]) == "352x288")
        #expect(try Data(contentsOf: URL(fileURLWithPath: original)) == bytes)
        // The edited file is served under its URL.
        let download = try request(served.port, "GET", try #require(edited["url"] as? String))
        #expect(download.status == 200 && Array(download.body.prefix(2)) == [0xFF, 0xD8])

        try plantTraps(served)
        let before = tree(served)
        let crop = #""crop": {"x": 0, "y": 0, "width": 0.5, "height": 0.5}"#
        let refusals: [(String, Int)] = [
            (#"{"source": "../trap/secret.jpg", \#(crop)}"#, 403),
            (#"{"source": "\#(served.folder)/trap/secret.jpg", \#(crop)}"#, 403),
            (#"{"source": "secret.jpg", \#(crop)}"#, 403),
            (#"{"source": "away/secret.jpg", \#(crop)}"#, 403),
            (#"{"source": "missing.jpg", \#(crop)}"#, 403),
            (#"{"source": "\#(photo)", \#(crop), "location": "../out.jpg"}"#, 403),
            (#"{"source": "\#(photo)", \#(crop), "location": "/tmp/out.jpg"}"#, 403),
            (#"{"source": "\#(photo)", \#(crop), "location": "away/out.jpg"}"#, 403),
            (#"{"source": "\#(photo)", \#(crop), "location": "secret.jpg"}"#, 403),
            (#"{"source": "\#(photo)", \#(crop), "location": "out.gif"}"#, 400),
            (#"{"source": "\#(photo)", "crop": {"x": 0.9, "y": 0, "width": 0.5, "height": 1}}"#, 400),
            (#"{"source": "\#(photo)", "crop": {"x": "0", "y": 0, "width": 0.5, "height": 1}}"#, 400),
            (#"{"source": "\#(photo)", "crop": [0, 0, 1, 1]}"#, 400),
            (#"{"source": "\#(photo)"}"#, 400),
            (#"{"source": "\#(photo)", \#(crop), "size": {"width": 2, "height": 2}}"#, 400),
            (#"{"source": 7, \#(crop)}"#, 400),
            ("not json", 400),
        ]
        for (body, status) in refusals {
            let refused = try request(served.port, "POST", "/api/crop", body: body)
            #expect(refused.status == status, "\(body): \(refused.text)")
        }
        #expect(tree(served) == before)
    }

    @Test func theTrimEditorsFramesTrimAndThumbnail() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        try await makeClip(served, "clips/take.mp4")
        try plantTraps(served)
        let before = tree(served)

        // The ends of a range: JPEGs made in memory, nothing written.
        let frame = try request(served.port, "GET", "/api/frame?source=clips/take.mp4&time=1.5&size=160")
        #expect(frame.status == 200 && frame.headers["content-type"] == "image/jpeg", "\(frame.text)")
        #expect(abs((Double(frame.headers["x-frame-time"] ?? "") ?? 0) - 1.5) < 0.04)
        let scratch = served.folder + "/frame.jpg"
        try Data(frame.body).write(to: URL(fileURLWithPath: scratch))
        #expect(try await tool(["identify", "-format", "%wx%h", scratch]) == "160x120")
        try FileManager.default.removeItem(atPath: scratch)
        let late = try request(served.port, "GET", "/api/frame?source=clips/take.mp4&time=9")
        let lateMessage = late.json["message"] as? String ?? ""
        #expect(late.json["error"] as? String == "time-out-of-range" && lateMessage.contains("clips/take.mp4"), "\(late.text)")
        #expect(!lateMessage.contains(served.folder), "an answer names no folder: \(late.text)")
        for (target, status) in [
            ("/api/frame?source=../trap/secret.jpg&time=0", 403), ("/api/frame?source=secret.jpg&time=0", 403),
            ("/api/frame?source=fifo.mp4&time=0", 403), ("/api/frame?source=clips/take.mp4&time=-1", 400),
            ("/api/frame?source=clips/take.mp4&time=nan", 400), ("/api/frame?source=clips/take.mp4&time=9", 400),
            ("/api/frame?source=clips/take.mp4&time=0&size=5", 400), ("/api/frame?time=0", 400),
        ] {
            #expect(try request(served.port, "GET", target).status == status, "\(target)")
        }
        #expect(tree(served) == before)

        // Refused trims and thumbnails write nothing.
        for (path, body, status) in [
            ("/api/trim", #"{"source": "../trap/x.mp4", "from": 0, "to": 1}"#, 403),
            ("/api/trim", #"{"source": "clips/take.mp4", "from": 0, "to": 1, "location": "../x.mp4"}"#, 403),
            ("/api/trim", #"{"source": "clips/take.mp4", "from": 0, "to": 1, "location": "/tmp/x.mp4"}"#, 403),
            ("/api/trim", #"{"source": "fifo.mp4", "from": 0, "to": 1}"#, 403),
            ("/api/trim", #"{"source": "clips/take.mp4", "from": 1.5, "to": 0.5}"#, 400),
            ("/api/trim", #"{"source": "clips/take.mp4", "from": 0, "to": 30}"#, 400),
            ("/api/trim", #"{"source": "clips/take.mp4", "from": 0, "to": "1"}"#, 400),
            ("/api/trim", #"{"source": "clips/take.mp4", "from": 0, "to": 1, "mode": "fast"}"#, 400),
            ("/api/thumbnail", #"{"source": "away/x.mp4", "time": 0}"#, 403),
            ("/api/thumbnail", #"{"source": "clips/take.mp4", "time": 0, "location": "../t.jpg"}"#, 403),
            ("/api/thumbnail", #"{"source": "clips/take.mp4", "time": 5}"#, 400),
            ("/api/thumbnail", #"{"source": "clips/take.mp4"}"#, 400),
        ] {
            let refused = try request(served.port, "POST", path, body: body)
            #expect(refused.status == status, "\(path) \(body): \(refused.text)")
        }
        #expect(tree(served) == before)

        // A frame-exact trim: its duration is the range's within a frame, by ffprobe.
        let trimmed = try request(served.port, "POST", "/api/trim", body: #"{"source": "clips/take.mp4", "from": 0.5, "to": 1.5}"#)
        #expect(trimmed.status == 200, "\(trimmed.text)")
        let file = try #require(trimmed.json["file"] as? [String: Any])
        #expect(file["name"] as? String == "clips/take-trim.mp4" && trimmed.json["mode"] as? String == "exact")
        let probed = try await tool([
            "ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "default=noprint_wrappers=1:nokey=1",
            served.folder + "/media/clips/take-trim.mp4",
        ])
        let duration = try #require(Double(probed.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(abs(duration - 1.0) <= 1.0 / 30 + 0.001, "\(duration)")

        // A thumbnail at a time: a new file, next to the video.
        let thumbnail = try request(served.port, "POST", "/api/thumbnail", body: #"{"source": "clips/take.mp4", "time": 1.0}"#)
        #expect(thumbnail.status == 200, "\(thumbnail.text)")
        #expect((thumbnail.json["file"] as? [String: Any])?["name"] as? String == "clips/take-1.00s.jpg")
        #expect(abs((thumbnail.json["actualTime"] as? Double ?? -1) - 1.0) < 0.04)
        #expect(try await tool(["identify", "-format", "%wx%h", served.folder + "/media/clips/take-1.00s.jpg"]) == "320x240")
        #expect(tree(served) == (before + ["media/clips/take-trim.mp4", "media/clips/take-1.00s.jpg"]).sorted())
    }

    @Test func theAlbumIsPickedByItsNamesAndItsEditsGoToTheOutputFolder() async throws {
        let album = MediaLibrary(
            picturesFolder: FileManager.default.temporaryDirectory.appendingPathComponent("capture-album-\(UUID().uuidString)").path,
            videosFolder: FileManager.default.temporaryDirectory.appendingPathComponent("capture-album-videos-\(UUID().uuidString)").path)
        try FileManager.default.createDirectory(atPath: album.picturesFolder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: album.picturesFolder) }
        _ = try await tool([
            "gst-launch-1.0", "-q", "videotestsrc", "num-buffers=1", "!", "video/x-raw,width=400,height=300", "!", "jpegenc", "!", "filesink",
            "location=\(album.picturesFolder)/IMG_0001.jpg",
        ])
        let served = try await ServedSession(
            remoteAccess: RemoteAccess(album: album),
            catalog: { CombinedMediaCatalog(outputFolder: $0, albumPictures: album.picturesFolder, albumVideos: album.videosFolder) })
        defer { Task { await served.stop() } }
        let photo = try takePhoto(served)
        let items = try request(served.port, "GET", "/api/picker?kind=photo&order=name").json["items"] as? [[String: Any]] ?? []
        #expect(items.map { $0["name"] as? String } == [photo, "album-photos/IMG_0001.jpg"])
        #expect(items.map { $0["album"] as? Bool } == [false, true])
        // The album's URL is the gallery's: the file downloads.
        #expect(try request(served.port, "GET", try #require(items.last?["url"] as? String)).status == 200)

        let answer = try request(
            served.port, "POST", "/api/crop", body: #"{"source": "album-photos/IMG_0001.jpg", "crop": {"x": 0.5, "y": 0.5, "width": 0.5, "height": 0.5}}"#)
        #expect(answer.status == 200, "\(answer.text)")
        #expect((answer.json["original"] as? [String: Any])?["name"] as? String == "album-photos/IMG_0001.jpg")
        #expect((answer.json["edited"] as? [String: Any])?["name"] as? String == "IMG_0001-edited.jpg")
        #expect(try await tool(["identify", "-format", "%wx%h", served.folder + "/media/IMG_0001-edited.jpg"]) == "200x150")
        #expect(try FileManager.default.contentsOfDirectory(atPath: album.picturesFolder) == ["IMG_0001.jpg"])
    }

    @Test func theCameraRollNeedsTheTokenAndThePagesOrigin() async throws {
        let open = try await ServedSession()
        defer { Task { await open.stop() } }
        let photo = try takePhoto(open)
        let body = #"{"source": "\#(photo)", "crop": {"x": 0, "y": 0, "width": 0.5, "height": 0.5}}"#
        let before = tree(open)
        let foreign = try request(open.port, "POST", "/api/crop", body: body, headers: ["Origin": "http://evil.example"])
        #expect(foreign.status == 403 && foreign.json["error"] as? String == "forbidden-origin")
        #expect(tree(open) == before)

        let guarded = try await ServedSession(listen: ListenAddress(host: "0.0.0.0", port: 0))
        defer { Task { await guarded.stop() } }
        for (method, target) in [
            ("GET", "/api/picker"), ("GET", "/api/picker/item?name=IMG_0001.jpg"), ("GET", "/api/picker/preview?name=IMG_0001.jpg"),
            ("GET", "/api/frame?source=VID_0001.mp4&time=0"), ("POST", "/api/crop"), ("POST", "/api/trim"), ("POST", "/api/thumbnail"),
        ] {
            #expect(try request(guarded.port, method, target, body: method == "POST" ? body : nil).status == 401, "\(target)")
        }
        let token = try #require(guarded.server.token)
        #expect(try request(guarded.port, "GET", "/api/picker", headers: ["Authorization": "Bearer \(token)"]).status == 200)
    }
}
