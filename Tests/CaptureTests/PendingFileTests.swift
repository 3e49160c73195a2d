import Foundation
import Testing

@testable import Capture

/// Files written under a temporary name and published whole (`PendingFile`), and the temporary files
/// a killed process leaves (`TemporaryFiles`). No GStreamer: plain files in a scratch folder.
@Suite struct PendingFileTests {
    private func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("capture-pending-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func read(_ path: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
    }

    private func names(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    /// A PID that no process has: a child's, once it has ended and been waited for.
    private func endedPID() throws -> pid_t {
        var pid: pid_t = 0
        let arguments = ["/bin/true"]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        #expect(posix_spawn(&pid, "/bin/true", nil, nil, &argv, nil) == 0)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return pid
    }

    @Test func aFileTakesItsNameOnlyWhenPublished() throws {
        let folder = try scratch()
        let file = try PendingFile(requested: "\(folder)/clip.mp4", overwrite: false, extension: "mp4")
        try write("frames", to: file.temporary)
        #expect(names(folder) == [URL(fileURLWithPath: file.temporary).lastPathComponent], "nothing under the final name yet")
        #expect(try file.publish() == "\(folder)/clip.mp4")
        #expect(file.isThisFile("\(folder)/clip.mp4") && read("\(folder)/clip.mp4") == "frames")
        #expect(file.finish(keep: true) == "\(folder)/clip.mp4")
        #expect(names(folder) == ["clip.mp4"], "the temporary name is gone")
    }

    @Test func aFileWithNothingUsableLeavesNothing() throws {
        let folder = try scratch()
        let file = try PendingFile(requested: "\(folder)/clip.mp4", overwrite: false, extension: "mp4")
        try write("header only", to: file.temporary)
        #expect(file.finish(keep: false) == nil)
        #expect(names(folder).isEmpty)
        #expect(throws: CaptureError.self) { try file.publish() }
        #expect(names(folder).isEmpty)
    }

    @Test func aNameTakenMeanwhileMovesOnAndAnExistingOneIsRefused() throws {
        let folder = try scratch()
        try write("old", to: "\(folder)/taken.mp4")
        #expect(throws: CaptureError.fileAlreadyExists(path: "\(folder)/taken.mp4")) {
            _ = try PendingFile(requested: "\(folder)/taken.mp4", overwrite: false, extension: "mp4")
        }
        let file = try PendingFile(requested: "\(folder)/clip.mp4", overwrite: false, extension: "mp4")
        try write("new", to: file.temporary)
        try write("someone else's", to: "\(folder)/clip.mp4")
        #expect(try file.publish() == "\(folder)/clip-1.mp4")
        #expect(read("\(folder)/clip.mp4") == "someone else's" && read("\(folder)/clip-1.mp4") == "new")
        #expect(file.finish(keep: true) == "\(folder)/clip-1.mp4")
        // A pattern takes its next free number.
        let numbered = try PendingFile(requested: "\(folder)/take_%02d.mp4", overwrite: true, extension: "mp4")
        try write("one", to: numbered.temporary)
        #expect(numbered.finish(keep: true) == "\(folder)/take_01.mp4")
    }

    @Test func overwritingReplacesTheOldFileWholeAndOnlyOnPublishing() throws {
        let folder = try scratch()
        try write("the old movie", to: "\(folder)/keep.mp4")
        let file = try PendingFile(requested: "\(folder)/keep.mp4", overwrite: true, extension: "mp4")
        try write("the new one", to: file.temporary)
        #expect(read("\(folder)/keep.mp4") == "the old movie", "untouched until published")
        try file.publish()
        #expect(read("\(folder)/keep.mp4") == "the new one")
        #expect(file.finish(keep: true) == "\(folder)/keep.mp4")
        // A device, a link or a folder is never replaced.
        symlink("/dev/null", "\(folder)/link.mp4")
        #expect(throws: CaptureError.self) { _ = try PendingFile(requested: "\(folder)/link.mp4", overwrite: true, extension: "mp4") }
    }

    @Test func twoWritersOverwritingOneNameEachKeepTheirFile() throws {
        let folder = try scratch()
        let first = try PendingFile(requested: "\(folder)/keep.mp4", overwrite: true, extension: "mp4")
        let second = try PendingFile(requested: "\(folder)/keep.mp4", overwrite: true, extension: "mp4")
        try write("first", to: first.temporary)
        try write("second", to: second.temporary)
        try first.publish()
        try second.publish()
        // The first writer's file was replaced at the name: it keeps it under the next free one.
        #expect(first.finish(keep: true) == "\(folder)/keep-1.mp4")
        #expect(second.finish(keep: true) == "\(folder)/keep.mp4")
        #expect(read("\(folder)/keep.mp4") == "second" && read("\(folder)/keep-1.mp4") == "first")
        #expect(names(folder) == ["keep-1.mp4", "keep.mp4"])
    }

    @Test func staleTemporariesOfEndedProcessesAreRemovedAndNothingElse() throws {
        let folder = try scratch()
        let uuid = UUID().uuidString
        let ended = try endedPID()
        let stale = ".capture-\(ended)-\(uuid).mp4"
        let live = ".capture-1-\(uuid).mp4"  // PID 1 runs
        let unrelated = [".capture-notes.txt", ".capture-\(ended)-not-a-uuid.mp4", "movie.mp4"]
        // A read-only one was kept on purpose (a recording that could not be given its name).
        let kept = ".capture-\(ended)-\(UUID().uuidString).mp4"
        for name in [stale, live, kept] + unrelated { try write("x", to: "\(folder)/\(name)") }
        chmod("\(folder)/\(kept)", 0o444)
        try FileManager.default.createDirectory(atPath: "\(folder)/.capture-\(ended)-\(UUID().uuidString).d", withIntermediateDirectories: false)
        #expect(TemporaryFiles.removeStale(in: folder) == 1)
        #expect(!names(folder).contains(stale))
        #expect(names(folder).contains(kept))
        #expect(names(folder).count == 6, "\(names(folder))")
        // Once per folder and process.
        try write("x", to: "\(folder)/\(stale)")
        #expect(TemporaryFiles.removeStale(in: folder) == 0)
    }

    @Test func aFileToKeepThatCannotTakeItsNameStaysUnderItsTemporaryName() throws {
        let folder = try scratch()
        // A name longer than a file name may be: linking it fails (ENAMETOOLONG), as a folder made
        // read-only would make it fail for a user the permissions apply to.
        let requested = "\(folder)/\(String(repeating: "a", count: 300)).mp4"
        let file = try PendingFile(requested: requested, overwrite: false, extension: "mp4")
        try write("frames", to: file.temporary)
        #expect(throws: CaptureError.self) { try file.publish() }
        #expect(file.finish(keep: true) == nil)
        let error = try #require(file.unnamedError)
        #expect(error.description.contains("too long"), "\(error)")
        #expect(read(file.temporary) == "frames")
        var info = stat()
        #expect(stat(file.temporary, &info) == 0 && info.st_mode & 0o222 == 0, "made read-only")
    }

    @Test func temporaryNamesCarryTheirOwner() {
        let uuid = UUID().uuidString
        #expect(TemporaryFiles.owner(of: ".capture-1234-\(uuid).tmp") == 1234)
        #expect(TemporaryFiles.owner(of: ".capture-1234-\(uuid)") == nil)
        #expect(TemporaryFiles.owner(of: ".capture-x-\(uuid).tmp") == nil)
        #expect(TemporaryFiles.owner(of: "capture-1234-\(uuid).tmp") == nil)
        #expect(TemporaryFiles.owner(of: ".capture-0-\(uuid).tmp") == nil)
        let made = FileNaming.temporaryName(in: "/tmp", extension: "mp4")
        #expect(TemporaryFiles.owner(of: URL(fileURLWithPath: made).lastPathComponent) == getpid())
    }
}
