import CaptureTestSupport
import Foundation
import Testing

@Suite struct BasicCommandTests {
    @Test func versionAndHelp() throws {
        let version = try capture(["--version"])
        #expect(version.status == 0 && version.output.hasPrefix("capture ") && version.output.contains("GStreamer 1."))
        let help = try capture(["--help"])
        #expect(help.status == 0)
        for command in ["devices", "run", "validate", "compile", "photo", "record", "scan", "thumbnail", "trim", "library", "controls", "bench"] {
            #expect(help.output.contains("  \(command) "), "help lists \(command)")
            #expect(try capture([command, "--help"]).status == 0, "\(command) --help")
        }
    }

    /// The process ends without running the libraries' destructors (`ProcessEnd.exit`): with `exit()`,
    /// a plugin another thread loads meanwhile re-runs GObject's set-up and the process aborts ("cannot
    /// register existing fundamental type 'gchar'", about 1 run in 2,000 of `capture photo` ending as
    /// the device monitor starts). Seen here through a preloaded library whose destructor leaves a file:
    /// that file must not appear, whether the command succeeds, fails or its output is a pipe.
    @Test func theProcessEndsWithoutRunningLibraryDestructors() throws {
        let scratch = try Scratch()
        try scratch.write(
            "marker.c",
            """
            #include <fcntl.h>
            #include <stdlib.h>
            #include <unistd.h>
            __attribute__((destructor)) static void ran(void) {
                const char *path = getenv("CAPTURE_TEST_DESTRUCTOR_MARK");
                if (path) close(open(path, O_CREAT | O_WRONLY, 0644));
            }
            """)
        let compiled = try tool(["/usr/bin/env", "clang", "-shared", "-fPIC", "-o", scratch.file("marker.so"), scratch.file("marker.c")])
        try #require(compiled.status == 0, "clang (the Swift toolchain's) builds the marker library: \(compiled.output)")
        // The marker library itself works: a program that ends with exit() runs it.
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = scratch.file("marker.so")
        environment["CAPTURE_TEST_DESTRUCTOR_MARK"] = scratch.file("control")
        _ = try ChildProcess(["/bin/true"], environment: environment).finish()
        try #require(FileManager.default.fileExists(atPath: scratch.file("control")), "the marker library's destructor runs at exit()")
        for (name, arguments) in [
            ("version", ["--version"]), ("devices", ["devices", "--json"]), ("usage", ["photo", "--quality", "0"]),
            ("photo", ["photo", "-i", "test-pattern", "-o", scratch.file("p.jpg")]),
        ] {
            environment["CAPTURE_TEST_DESTRUCTOR_MARK"] = scratch.file("mark-\(name)")
            let result = try ChildProcess([captureBinary] + arguments, environment: environment).finish()
            #expect(!result.output.isEmpty || !result.error.isEmpty, "capture \(arguments) said something (status \(result.status))")
            #expect(!FileManager.default.fileExists(atPath: scratch.file("mark-\(name)")), "capture \(arguments) ran the libraries' destructors")
        }
        #expect(try tool(["identify", "-format", "%m", scratch.file("p.jpg")]).output == "JPEG", "the photo was written before the process ended")
    }

    @Test func usageErrorsExit64() throws {
        let unknown = try capture(["frobnicate"])
        #expect(unknown.status == 64 && unknown.error.contains("unknown command 'frobnicate'"))
        #expect(try capture([]).status == 64)
        let option = try capture(["devices", "--bogus"])
        #expect(option.status == 64 && option.error.contains("--bogus"))
        #expect(try capture(["photo", "--codec", "gif"]).status == 64)
        #expect(try capture(["photo", "--quality", "0"]).status == 64)
    }

    @Test func devicesListsTheVirtualDevices() throws {
        let text = try capture(["devices"])
        #expect(text.status == 0)
        #expect(text.output.contains("test-pattern") && text.output.contains("test-tone"))
        let json = try capture(["devices", "--json"])
        #expect(json.status == 0)
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        let ids = devices.compactMap { $0["id"] as? String }
        #expect(Array(ids.suffix(2)) == ["test-pattern", "test-tone"])
        let pattern = try #require(devices.first { $0["id"] as? String == "test-pattern" })
        #expect((pattern["formats"] as? [Any])?.isEmpty == false)
        #expect(pattern["media"] as? String == "video")
    }

    /// Connections and disconnections themselves are proven on vivid (hardware tier: sysfs unbind/bind);
    /// here: the watch says it listens, ends at its timeout, and --count unmet is a failure.
    @Test func devicesWatchEndsAtItsTimeoutOrCount() throws {
        let watch = try capture(["devices", "--watch", "--json", "--timeout", "0.5"])
        #expect(watch.status == 0, "\(watch.error)")
        #expect(watch.error.contains("watching for devices"))
        #expect(watch.output.isEmpty)  // no device came or went, and those present are not announced
        let counted = try capture(["devices", "--watch", "--count", "1", "--timeout", "0.5"])
        #expect(counted.status == 1)
        #expect(counted.error.contains("saw 0 of 1 device events"))
        let misuse = try capture(["devices", "--timeout", "1"])
        #expect(misuse.status == 64)
    }

    @Test func photoWritesDecodableImages() throws {
        let scratch = try Scratch()
        let result = try capture(["photo", "-i", "test-pattern", "--count", "2", "--size", "320x240"], in: scratch.path)
        #expect(result.status == 0, "\(result.error)")
        for name in ["IMG_0001.jpg", "IMG_0002.jpg"] {
            let identify = try tool(["identify", "-format", "%m %w %h", scratch.file(name)])
            #expect(identify.output == "JPEG 320 240")
        }
        let png = try capture(["photo", "-i", "test-pattern", "--codec", "png", "-o", "shot.png", "--json"], in: scratch.path)
        #expect(png.status == 0)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(png.output.utf8)) as? [String: Any])
        #expect(line["location"] as? String == "shot.png")
        #expect(try tool(["identify", "-format", "%m", scratch.file("shot.png")]).output == "PNG")
    }

    @Test func photoErrorsExitWithTheContractsCodes() throws {
        let scratch = try Scratch()
        let missing = try capture(["photo", "-i", "/dev/video77"], in: scratch.path)
        #expect(missing.status == 69 && missing.error.contains("capture devices"))
        let tooBig = try capture(["photo", "-i", "test-pattern", "--size", "9000x9000"], in: scratch.path)
        #expect(tooBig.status == 65 && tooBig.error.contains("upscaling is refused"))
    }
}

/// docs/cli.md documents every subcommand and every option of the CLI, as the binary's own completion
/// script lists them (issue 29: docs that say what is true). Planting an option in the list shows the
/// check fails.
@Suite struct CLIDocumentationTests {
    /// Each command of `capture completions bash` with its options.
    static func commandsAndOptions() throws -> [(command: String, options: [String])] {
        let script = try capture(["completions", "bash"]).output
        return script.split(separator: "\n").compactMap { line -> (String, [String])? in
            let text = line.trimmingCharacters(in: .whitespaces)
            guard let close = text.firstIndex(of: ")"), text.contains("options=\""), let open = text.range(of: "options=\"") else { return nil }
            let command = String(text[..<close])
            let list = text[open.upperBound...].prefix { $0 != "\"" }
            return (command, list.split(separator: " ").map(String.init).filter { $0.hasPrefix("--") && $0 != "--help" })
        }
    }

    static func undocumented(_ commands: [(command: String, options: [String])], in document: String) -> [String] {
        commands.flatMap { entry in
            (document.contains("capture \(entry.command)") ? [] : ["capture \(entry.command)"])
                + entry.options.filter { option in ["`", " ", "["].allSatisfy { !document.contains($0 + option) } }
                .map { "capture \(entry.command) \($0)" }
        }
    }

    @Test func everyCommandAndOptionIsInTheCLIDocument() throws {
        let document = try String(contentsOfFile: packageRoot + "/docs/cli.md", encoding: .utf8)
        let commands = try Self.commandsAndOptions()
        #expect(commands.count >= 15 && commands.contains { $0.command == "trim" && $0.options.contains("--fast") })
        #expect(Self.undocumented(commands, in: document) == [])
        let planted = Self.undocumented([("trim", ["--planted-option"]), ("planted-command", [])], in: document)
        #expect(planted == ["capture trim --planted-option", "capture planted-command"])
    }
}
