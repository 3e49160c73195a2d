import Foundation
import Testing

@testable import Capture

/// Issue #29: a block dropped whole (`cancelConfiguration`), picking from the album, and files replaced
/// only when asked.
@Suite struct CancelConfigurationTests {
    @Test func aCancelledBlockLeavesTheSessionAsItWas() throws {
        let (session, _) = try makeSession()
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(photo)
        let movie = CaptureMovieFileOutput(name: "movie")
        session.beginConfiguration()
        try session.removeOutput(photo)
        try session.addInput(CaptureDeviceInput(device: .testTone, name: "microphone"))
        try session.addOutput(movie)
        try session.setSessionPreset(.cif352x288)
        #expect(session.outputs.map(\.name) == ["movie"])
        try session.cancelConfiguration()
        #expect(!session.isConfiguring)
        #expect(session.outputs.map(\.name) == ["photo"])
        #expect(session.inputs.map(\.name) == ["camera"])
        #expect(session.sessionPreset == .vga640x480)
        // The output the dropped block added is free for another session; the one it removed is not.
        let other = CaptureSession()
        #expect(other.canAddOutput(movie))
        #expect(!other.canAddOutput(photo))
        #expect(throws: CaptureError.commitWithoutBegin) { try session.cancelConfiguration() }
    }

    @Test func anInnerCancelKeepsTheOuterBlocksChanges() async throws {
        let (session, _) = try makeSession()
        session.beginConfiguration()
        try session.addOutput(CaptureVideoDataOutput(name: "kept"))
        session.beginConfiguration()
        try session.addOutput(CaptureVideoDataOutput(name: "dropped"))
        try session.cancelConfiguration()
        #expect(session.isConfiguring)
        #expect(session.outputs.map(\.name) == ["kept"])
        try await session.commitConfiguration()
        #expect(session.outputs.map(\.name) == ["kept"])
    }

    /// On a running session a cancelled block never reaches the pipeline: no commit is posted and the
    /// outputs that were there keep working.
    @Test func aCancelledBlockOnARunningSessionTouchesNothing() async throws {
        let (session, _) = try makeSession()
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(frames)
        let events = session.events()
        try await session.startRunning()
        session.beginConfiguration()
        try session.removeOutput(frames)
        try session.addOutput(CaptureVideoDataOutput(name: "other"))
        try session.cancelConfiguration()
        // A change after it is the next thing the pipeline sees: its commit is the first one posted.
        try await session.applyChange { () throws(CaptureError) in try session.addOutput(CaptureVideoDataOutput(name: "later")) }
        #expect(await firstFrame(frames) != nil)
        await session.stopRunning()
        var commits: [ConfigurationReport] = []
        for await event in events {
            if case .configurationCommitted(let report) = event.kind { commits.append(report) }
            if case .sessionStopped = event.kind { break }
        }
        #expect(commits.count == 1)
        #expect(commits.first?.addedOutputs == ["later"] && commits.first?.removedOutputs == [])
    }

    /// `applyChange` whose change throws applies nothing of it (it used to commit what came before).
    @Test func aFailedApplyChangeAppliesNothing() async throws {
        let (session, _) = try makeSession()
        try await session.startRunning()
        await #expect(throws: CaptureError.unknownInput(name: "nope")) {
            try await session.applyChange { () throws(CaptureError) in
                try session.addOutput(CaptureVideoDataOutput(name: "half"))
                throw CaptureError.unknownInput(name: "nope")
            }
        }
        #expect(session.outputs.isEmpty && !session.isConfiguring)
        await session.stopRunning()
    }
}

@Suite struct LibraryPickTests {
    func library(_ directory: TemporaryDirectory) throws -> MediaLibrary {
        let library = MediaLibrary(picturesFolder: directory.path("Pictures"), videosFolder: directory.path("Videos"))
        for folder in [library.picturesFolder, library.videosFolder] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        return library
    }

    /// Sets a file's modification time (seconds since 1970), so that "newest" does not depend on how fast files were made.
    func touch(_ path: String, _ seconds: Double) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: path)
    }

    @Test func picksTheNewestByKindOrByName() throws {
        let directory = try TemporaryDirectory()
        let library = try library(directory)
        #expect(
            throws: CaptureError.libraryItemNotFound(kind: nil, name: nil, folders: [library.picturesFolder, library.videosFolder])
        ) { _ = try library.pick() }
        #expect(try run(["convert", "-size", "64x48", "xc:red", library.picturesFolder + "/old.jpg"]).status == 0)
        #expect(try run(["convert", "-size", "32x24", "xc:blue", library.picturesFolder + "/new.png"]).status == 0)
        try makeVideoFile(library.videosFolder + "/clip.mp4", seconds: 1)
        try touch(library.picturesFolder + "/old.jpg", 1_000)
        try touch(library.picturesFolder + "/new.png", 2_000)
        try touch(library.videosFolder + "/clip.mp4", 1_500)

        let newest = try library.pick()
        #expect(newest.path == library.picturesFolder + "/new.png" && newest.kind == .photo && newest.width == 32 && newest.height == 24)
        let video = try library.pick(.video)
        #expect(video.path == library.videosFolder + "/clip.mp4" && video.kind == .video)
        #expect((video.duration ?? 0) > 0.9 && video.width == 320)
        let named = try library.pick(named: "old.jpg")
        #expect(named.path == library.picturesFolder + "/old.jpg" && named.width == 64)
        #expect(try library.pick(.photo, named: "old.jpg") == named)

        #expect(throws: CaptureError.libraryItemNotFound(kind: "video", name: "old.jpg", folders: [library.videosFolder])) {
            _ = try library.pick(.video, named: "old.jpg")
        }
        #expect(throws: CaptureError.libraryItemNotFound(kind: nil, name: "../Pictures/old.jpg", folders: [library.picturesFolder, library.videosFolder])) {
            _ = try library.pick(named: "../Pictures/old.jpg")
        }
        let message = CaptureError.libraryItemNotFound(kind: "video", name: "x.mp4", folders: [library.videosFolder]).description
        #expect(message.contains("no video named 'x.mp4'") && message.contains(library.videosFolder))
        #expect(CaptureError.libraryItemNotFound(kind: nil, name: nil, folders: []).name == "library-item-not-found")
    }
}

@Suite struct OverwriteTests {
    @Test func writeReplacingReplacesOnlyARegularFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shot.jpg")
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try FileNaming.writeReplacing(Array("new".utf8), to: path) == path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        // No temporary file is left next to it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["shot.jpg"])
        // A folder or a link there is refused and left as it is.
        try FileManager.default.createDirectory(atPath: directory.path("folder.jpg"), withIntermediateDirectories: false)
        #expect(throws: CaptureError.invalidLocation(path: directory.path("folder.jpg"), reason: "it is a directory; only a regular file is replaced")) {
            _ = try FileNaming.writeReplacing([1], to: directory.path("folder.jpg"))
        }
        try FileManager.default.createSymbolicLink(atPath: directory.path("link.jpg"), withDestinationPath: path)
        #expect(throws: CaptureError.self) { _ = try FileNaming.writeReplacing([1], to: directory.path("link.jpg")) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
    }

    /// A photo output replaces a file only when `overwritesExistingFile` says so; otherwise the file that
    /// was there is left whole and the photo takes the next free name.
    @Test func aPhotoReplacesAFileOnlyWhenAsked() async throws {
        let directory = try TemporaryDirectory()
        let taken = directory.path("shot.jpg")
        try Data("not a photo of ours".utf8).write(to: URL(fileURLWithPath: taken))
        let (session, _) = try makeSession()
        let photos = CapturePhotoOutput(name: "photo")
        photos.defaults.location = taken
        try session.addOutput(photos)
        try await session.startRunning()
        let kept = try await photos.capturePhoto()
        #expect(kept.location == directory.path("shot-1.jpg"))
        #expect(try String(contentsOfFile: taken, encoding: .utf8) == "not a photo of ours")
        photos.defaults.overwritesExistingFile = true
        let replaced = try await photos.capturePhoto()
        #expect(replaced.location == taken && replaced.resolvedSettings.overwritesExistingFile)
        await session.stopRunning()
        #expect(try run(["identify", "-format", "%wx%h %m", taken]).output == "640x480 JPEG")
        // A %d pattern never replaces, whatever the setting.
        photos.defaults.location = directory.path("n_%d.jpg")
        try await session.startRunning()
        #expect(try await photos.capturePhoto().resolvedSettings.overwritesExistingFile == false)
        await session.stopRunning()
    }
}
