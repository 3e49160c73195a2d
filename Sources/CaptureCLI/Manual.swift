import Capture
import Foundation

/// `capture completions SHELL` and `capture manual`.
enum ManualCommand {
    static let completionsHelp = """
        usage: capture completions bash|zsh|fish

        Prints a completion script for the shell: the commands, and each command's options as its parser
        takes them. `make install` puts them where each shell looks; by hand:
          capture completions bash > ~/.local/share/bash-completion/completions/capture
          capture completions zsh > ~/.zfunc/_capture
          capture completions fish > ~/.config/fish/completions/capture.fish
        """

    static let manualHelp = """
        usage: capture manual

        Prints the manual page in roff, made from the same text as `--help` (`man capture` once installed;
        `capture manual | man -l -` before).
        """

    static let spec = Arguments.Spec(options: [])

    static func parse(_ command: String, _ arguments: [String]) throws(Arguments.UsageError) -> String? {
        let parsed = try Arguments(arguments, spec)
        if command == "manual" {
            guard parsed.positionals.isEmpty else { throw Arguments.UsageError(description: "capture manual takes no arguments") }
            return nil
        }
        guard parsed.positionals.count == 1, let shell = parsed.positionals.first, Completions.shells.contains(shell) else {
            throw Arguments.UsageError(description: "which shell? one of \(Completions.shells.joined(separator: ", "))")
        }
        return shell
    }

    static func run(_ command: String, _ arguments: [String]) throws(Arguments.UsageError) -> Int32 {
        if let shell = try parse(command, arguments), let script = Completions.script(for: shell) {
            print(script, terminator: "")
        } else {
            print(Manual.roff(), terminator: "")
        }
        return ExitCode.success
    }
}

/// `man capture` and the shell completions, made from the same text and option lists as `--help` and
/// the option parsers, so the three cannot drift apart. `make install` and `make deb` write them with
/// `capture manual` and `capture completions SHELL`.
enum Manual {
    /// The manual page in roff (man(7)): the usage text, then every command's `--help`.
    static func roff(date: Date = Date()) -> String {
        var page: [String] = []
        let day = Self.day(date)
        page.append(".TH CAPTURE 1 \"\(day)\" \"capture \(CaptureVersion.string)\" \"User Commands\"")
        page.append(".SH NAME")
        page.append("capture \\- AVFoundation-style camera capture on GStreamer")
        page.append(".SH SYNOPSIS")
        page.append(".B capture")
        page.append(".I COMMAND")
        page.append("[\\fIOPTIONS\\fR]")
        page.append(".SH DESCRIPTION")
        page += literal(CommandLineTool.usage)
        page.append(".SH COMMANDS")
        for command in CommandLineTool.commands {
            page.append(".SS \(escape(command.name))")
            page += literal(CommandLineTool.helpText(command.name) ?? command.summary)
        }
        page.append(".SH FILES")
        page.append("Example sessions in \\fI.pipeline\\fR files are installed under \\fIshare/capture/Pipelines\\fR.")
        page.append(".SH SEE ALSO")
        page.append(".BR gst-launch-1.0 (1),")
        page.append(".BR v4l2-ctl (1)")
        return page.joined(separator: "\n") + "\n"
    }

    /// A block shown as written (no filling), each line escaped for roff.
    private static func literal(_ text: String) -> [String] {
        [".nf"] + text.split(separator: "\n", omittingEmptySubsequences: false).map { escape(String($0)) } + [".fi"]
    }

    /// Escapes what roff would read as requests or escapes: backslashes, and a leading `.` or `'`.
    static func escape(_ line: String) -> String {
        var escaped = line.replacingOccurrences(of: "\\", with: "\\e")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }

    private static func day(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }
}

/// Shell completion scripts: the commands, and each command's options as its parser knows them.
enum Completions {
    static let shells = ["bash", "zsh", "fish"]

    /// Every command with the options and flags its parser takes (`--name`; short aliases as `-x`), from
    /// the CLI's own command table.
    static var table: [(command: String, options: [String])] {
        CommandLineTool.commands.map { command in
            let spec = command.spec
            let long = (spec.options.union(spec.flags)).sorted().map { "--" + $0 }
            let short = spec.aliases.keys.sorted().map { "-" + $0 }
            return (command.name, long + short + ["--help"])
        }
    }

    static func script(for shell: String) -> String? {
        let table = self.table
        let names = table.map(\.command).joined(separator: " ")
        switch shell {
        case "bash":
            var cases = ""
            for entry in table { cases += "        \(entry.command)) options=\"\(entry.options.joined(separator: " "))\" ;;\n" }
            return """
                # bash completion for capture (made by `capture completions bash`)
                _capture() {
                    local current=${COMP_WORDS[COMP_CWORD]} options=""
                    if [[ $COMP_CWORD -eq 1 ]]; then
                        COMPREPLY=($(compgen -W "\(names) --help --version" -- "$current"))
                        return
                    fi
                    case ${COMP_WORDS[1]} in
                \(cases)    esac
                    if [[ $current == -* ]]; then
                        COMPREPLY=($(compgen -W "$options" -- "$current"))
                    else
                        COMPREPLY=($(compgen -f -- "$current"))
                    fi
                }
                complete -o filenames -F _capture capture

                """
        case "zsh":
            var cases = ""
            for entry in table { cases += "    \(entry.command)) options=(\(entry.options.joined(separator: " "))) ;;\n" }
            let described = CommandLineTool.commands.map { "'\($0.name):\(zshQuoted($0.summary))'" }.joined(separator: " ")
            return """
                #compdef capture
                # zsh completion for capture (made by `capture completions zsh`)
                _capture() {
                  local -a commands options
                  commands=(\(described))
                  if (( CURRENT == 2 )); then
                    _describe 'command' commands
                    return
                  fi
                  case ${words[2]} in
                \(cases)  esac
                  if [[ ${words[CURRENT]} == -* ]]; then
                    compadd -a options
                  else
                    _files
                  fi
                }
                _capture "$@"

                """
        case "fish":
            var lines = [
                "# fish completion for capture (made by `capture completions fish`)",
                "complete -c capture -f -n '__fish_use_subcommand' -l version -d 'print the version'",
            ]
            for command in CommandLineTool.commands {
                lines.append("complete -c capture -f -n '__fish_use_subcommand' -a \(command.name) -d '\(fishQuoted(command.summary))'")
            }
            for entry in table {
                for option in entry.options {
                    let flag = option.hasPrefix("--") ? "-l \(option.dropFirst(2))" : "-s \(option.dropFirst())"
                    lines.append("complete -c capture -n '__fish_seen_subcommand_from \(entry.command)' \(flag)")
                }
            }
            return lines.joined(separator: "\n") + "\n"
        default:
            return nil
        }
    }

    private static func zshQuoted(_ text: String) -> String {
        text.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: ":", with: "\\:")
    }

    private static func fishQuoted(_ text: String) -> String { text.replacingOccurrences(of: "'", with: "\\'") }
}
