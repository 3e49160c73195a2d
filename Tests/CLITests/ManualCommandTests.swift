import Foundation
import Testing

/// `capture completions` and `capture manual`: made from the same command list, options and help
/// text as the tool itself, so every subcommand is in them.
@Suite struct ManualCommandTests {
    /// The subcommands `capture --help` lists (the lines under "Commands:").
    static var subcommands: [String] {
        get throws {
            let usage = try capture(["--help"]).output.split(separator: "\n").map(String.init)
            guard let start = usage.firstIndex(of: "Commands:") else { return [] }
            return usage[(start + 1)...].prefix { $0.hasPrefix("  ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        }
    }

    @Test func theHelpListsTheCommands() throws {
        #expect(try Self.subcommands.count >= 15)
    }

    @Test func bashCompletesEverySubcommandAndTheOptionsOfOne() throws {
        let scratch = try Scratch()
        let script = try capture(["completions", "bash"])
        #expect(script.status == 0)
        try scratch.write("capture.bash", script.output)
        // Complete `capture <TAB>`, then `capture photo --<TAB>`, in a real bash.
        let probe = """
            source \(scratch.file("capture.bash"))
            COMP_WORDS=(capture ""); COMP_CWORD=1; _capture; echo "${COMPREPLY[*]}"
            COMP_WORDS=(capture photo --); COMP_CWORD=2; _capture; echo "${COMPREPLY[*]}"
            """
        try scratch.write("probe.sh", probe)
        let result = try tool(["bash", scratch.file("probe.sh")])
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count >= 2, "\(result.output)")
        let offered = Set((lines.first ?? "").split(separator: " ").map(String.init))
        for command in try Self.subcommands { #expect(offered.contains(command), "bash does not offer \(command)") }
        #expect(lines.count >= 2 && lines[1].contains("--output") && lines[1].contains("--size") && lines[1].contains("--help"), "\(lines)")
    }

    @Test func zshAndFishScriptsNameEverySubcommand() throws {
        let scratch = try Scratch()
        for shell in ["zsh", "fish"] {
            let script = try capture(["completions", shell])
            #expect(script.status == 0)
            for command in try Self.subcommands {
                #expect(script.output.contains(shell == "zsh" ? "'\(command):" : "-a \(command) "), "\(shell) does not name \(command)")
            }
            // Checked by the shell itself when it is installed.
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/\(shell)") {
                try scratch.write("script.\(shell)", script.output)
                let check = try tool(["/usr/bin/\(shell)", "-n", scratch.file("script.\(shell)")])
                #expect(check.status == 0, "\(shell) -n: \(check.output)")
            }
        }
        let unknown = try capture(["completions", "tcsh"])
        #expect(unknown.status == 64 && unknown.error.contains("bash, zsh, fish"))
    }

    @Test func theManualHoldsEveryCommandsHelp() throws {
        let page = try capture(["manual"])
        #expect(page.status == 0)
        #expect(page.output.hasPrefix(".TH CAPTURE 1 "))
        for command in try Self.subcommands { #expect(page.output.contains(".SS \(command)\n"), "no section for \(command)") }
        // The help text of a command, as --help prints it, is in its section.
        let help = try capture(["photo", "--help"])
        let firstLine = try #require(help.output.split(separator: "\n").first)
        #expect(page.output.contains(String(firstLine)))
        // man renders it (when man-db is installed).
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/man") {
            let scratch = try Scratch()
            try scratch.write("capture.1", page.output)
            let rendered = try tool(["/usr/bin/man", "-l", scratch.file("capture.1")])
            #expect(rendered.status == 0 && rendered.output.contains("SYNOPSIS"), "\(rendered.output.prefix(300))")
        }
    }
}
