import Capture
import Foundation

// The `capture` command: argument parsing and printing only; the work is done by the libraries.
// An argument that is not UTF-8 would reach Swift with U+FFFD in place of its bytes, so the file named
// would not be the file written or read: refuse it.
for index in 1..<Int(CommandLine.argc) {
    guard let raw = CommandLine.unsafeArgv[index] else { continue }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
    if String(validating: bytes, as: UTF8.self) == nil {
        FileHandle.standardError.write(Data("capture: argument \(index) is not valid UTF-8; capture takes names and paths in UTF-8\n".utf8))
        exit(ExitCode.usage)
    }
}
// One line at a time, also into a file or a pipe: a command stopped by a signal (or killed) has
// written every line it printed, not a block that was still buffered.
StandardOutput.useLineBuffering()
let status = await CommandLineTool.run(Array(CommandLine.arguments.dropFirst()))
if (ProcessInfo.processInfo.environment["GST_TRACERS"] ?? "").contains("leaks") {
    GStreamerInfo.shutdownForLeakCheck()
}
ProcessEnd.exit(status)
