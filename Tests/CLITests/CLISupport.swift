import Capture
import CaptureTestSupport
import Foundation
import Testing

/// The built `capture` binary: $CAPTURE_BIN (the Makefile points it at the release build), else the
/// debug build of this package.
let captureBinary: String = {
    if let path = ProcessInfo.processInfo.environment["CAPTURE_BIN"], !path.isEmpty { return path }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/capture").path
}()

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// Runs `capture` with arguments in a directory and returns exit status, stdout and stderr.
func capture(_ arguments: [String], in directory: String? = nil) throws -> (status: Int32, output: String, error: String) {
    var command = [captureBinary] + arguments
    if let directory { command = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory] + command }
    let result = try ChildProcess(command).finish()
    return (result.status, result.output, result.error)
}

/// A scratch directory for one test.
final class Scratch: @unchecked Sendable {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("capture-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String) -> String { path + "/" + name }
    func write(_ name: String, _ text: String) throws { try text.write(toFile: file(name), atomically: true, encoding: .utf8) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// An independent tool's output (identify, ffprobe, zbarimg ...).
func tool(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let result = try ChildProcess(arguments).finish()
    return (result.status, result.output + result.error)
}

/// Waits until `condition` holds about another process's files (a name published, a temporary file
/// made, lines in a log), bounded by `timeout`, then records an issue. The other process posts no event
/// this one can subscribe to, so the condition is read every 20 ms; nothing is counted after a sleep:
/// the wait ends at the first read that sees the state, however loaded the machine.
func waitFor(_ what: String, timeout: Duration = .seconds(30), _ condition: () -> Bool) async throws {
    if await !waitUntil(timeout: timeout, every: .milliseconds(20), condition) { Issue.record("timed out waiting for \(what)") }
}
