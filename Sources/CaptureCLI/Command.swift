import Capture
import Foundation

/// One command of the CLI: its name and one-line summary (the usage text, the manual page, the
/// completions), the options and flags it parses with (the completions offer them, the fuzzer generates
/// from them), and its parser.
package struct Command: Sendable {
    /// Parses an argument vector as the command does before it runs; runs nothing.
    package typealias Parser = @Sendable ([String]) throws(Arguments.UsageError) -> Void

    package let name: String
    package let summary: String
    package let spec: Arguments.Spec
    /// nil for the developer commands (`bench`, `soak`): their parsers are in capture-dev, which runs them.
    package let parse: Parser?

    init(_ name: String, _ summary: String, _ spec: Arguments.Spec, parse: Parser?) {
        self.name = name
        self.summary = summary
        self.spec = spec
        self.parse = parse
    }
}

extension CommandLineTool {
    /// A developer command (`bench`, `soak`) as capture-dev runs it: the arguments after its name in,
    /// the exit status out.
    package typealias DeveloperCommand = @Sendable ([String]) async throws -> Int32

    /// The whole program: refuses arguments that are not UTF-8, runs the command, ends the process with
    /// its status. `developerCommands` are the commands this binary runs itself (capture-dev's `bench`
    /// and `soak`); `capture` passes none and hands those commands to capture-dev.
    package static func main(developerCommands: [String: DeveloperCommand] = [:]) async -> Never {
        // An argument that is not UTF-8 would reach Swift with U+FFFD in place of its bytes, so the file
        // named would not be the file written or read: refuse it.
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
            if String(validating: bytes, as: UTF8.self) == nil {
                printError("argument \(index) is not valid UTF-8; capture takes names and paths in UTF-8")
                ProcessEnd.exit(ExitCode.usage)
            }
        }
        // One line at a time, also into a file or a pipe: a command stopped by a signal (or killed) has
        // written every line it printed, not a block that was still buffered.
        StandardOutput.useLineBuffering()
        let status = await run(Array(CommandLine.arguments.dropFirst()), developerCommands: developerCommands)
        if (ProcessInfo.processInfo.environment["GST_TRACERS"] ?? "").contains("leaks") {
            GStreamerInfo.shutdownForLeakCheck()
        }
        ProcessEnd.exit(status)
    }
}
