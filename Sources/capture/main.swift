import Capture
import Foundation

// The `capture` command: argument parsing and printing only; the work is done by the libraries.
let status = await CommandLineTool.run(Array(CommandLine.arguments.dropFirst()))
if (ProcessInfo.processInfo.environment["GST_TRACERS"] ?? "").contains("leaks") {
    GStreamerInfo.shutdownForLeakCheck()
}
exit(status)
