import Foundation

/// Mutations of text inputs for fuzzing: bytes that matter to a line-and-field grammar, bytes that
/// should never be there, and whole-line edits. Seeded, so a failing input can be made again.
public struct TextMutator: Sendable {
    /// Inputs the mutations start from (and take lines from).
    public let seeds: [String]

    public init(seeds: [String]) { self.seeds = seeds }

    /// Bytes that matter to the `.pipeline` grammar, and some that should never be there.
    public static let interesting: [[UInt8]] =
        [
            "\"", "\\", ",", "=", "{", "}", "<", ">", "[", "]", "(", ")", ";", "#", "\n", "\t", " ", "0", "9", "-", ".", "%", "x", "/", ":",
            "\\\n", "\"\"", "(int)", "(string)", "(GstCaps)", "{ }", "< 1, 2 >", "1e400", "nan", "-1", "99999999999", "true", "repeat",
            "expect-error=", "begin-configuration\n", "commit-configuration\n", "actions={ \"", "é", "😀",
        ].map { Array($0.utf8) } + HostileText.directives.map { Array($0.utf8) } + [[0x00], [0x07], [0xC3], [0xFF], [0xE2, 0x80], [0xCC, 0x81]]

    /// One to four mutations of `text`: a byte replaced, grammar inserted, a range deleted, a line
    /// duplicated, swapped or deleted, the text truncated, a value replaced, a line of another seed added.
    public func mutate(_ text: String, _ random: inout SplitMix64) -> [UInt8] {
        var bytes = Array(text.utf8)
        let newline = UInt8(ascii: "\n")
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            var lines = bytes.split(separator: newline, omittingEmptySubsequences: false).map(Array.init)
            switch Int.random(in: 0..<9, using: &random) {
            case 0 where !bytes.isEmpty:  // replace a byte
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 1:  // insert grammar
                bytes.insert(contentsOf: Self.interesting.randomElement(using: &random)!, at: Int.random(in: 0...bytes.count, using: &random))
            case 2 where !bytes.isEmpty:  // delete a range
                let start = Int.random(in: 0..<bytes.count, using: &random)
                bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...12, using: &random)))
            case 3 where !lines.isEmpty:  // duplicate a line
                let line = lines.randomElement(using: &random)!
                lines.insert(line, at: Int.random(in: 0...lines.count, using: &random))
                bytes = Array(lines.joined(separator: [newline]))
            case 4 where lines.count > 1:  // swap two lines
                lines.swapAt(Int.random(in: 0..<lines.count, using: &random), Int.random(in: 0..<lines.count, using: &random))
                bytes = Array(lines.joined(separator: [newline]))
            case 5 where !lines.isEmpty:  // delete a line
                lines.remove(at: Int.random(in: 0..<lines.count, using: &random))
                bytes = Array(lines.joined(separator: [newline]))
            case 6:  // truncate
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
            case 7 where !bytes.isEmpty:  // replace the value after an '='
                if let equals = bytes.indices.filter({ bytes[$0] == UInt8(ascii: "=") }).randomElement(using: &random) {
                    var end = equals + 1
                    while end < bytes.count, ![UInt8(ascii: ","), newline].contains(bytes[end]) { end += 1 }
                    let value = Bool.random(using: &random) ? Self.interesting.randomElement(using: &random)! : Array(HostileText.path(&random).utf8)
                    bytes.replaceSubrange((equals + 1)..<end, with: value)
                }
            default:  // a line from another seed
                let other = seeds.randomElement(using: &random)!.split(separator: "\n").map { Array($0.utf8) }
                if let line = other.randomElement(using: &random) {
                    lines.insert(line, at: Int.random(in: 0...lines.count, using: &random))
                    bytes = Array(lines.joined(separator: [newline]))
                }
            }
        }
        return bytes
    }
}

/// Text a careless or hostile user might type where a name or a path goes: printf directives (what
/// C would read as a format), control characters (what would forge lines of output), shell syntax,
/// combining marks after a '%', odd Unicode.
public enum HostileText {
    public static let directives = [
        "%s", "%n", "%x", "%p", "%%", "%d", "%5d", "%05d", "%09d", "%010d", "%99999999999d", "%*d", "%.9d", "%ld", "%lld", "%1$d",
        "%-5d", "%+d", "% d", "%#x", "%c", "%", "%\u{301}d", "%0", "%9", "%d%d",
    ]
    public static let controls = ["\n", "\r", "\t", "\u{0}", "\u{7}", "\u{1B}[31m", "\u{7F}", "\r\n"]
    public static let pieces = [
        "a", "IMG_", "/", "..", "/tmp/", "~", "-", "\\", " ", "é", "e\u{301}", "😀", "\u{FFFD}", "\u{2028}", ".jpg", ".mp4", ".png",
        "$(echo x)", "`x`", "'", "\"", "!", "*", "?", "[", "{a,b}", ";", "|", "&", "dir/", "./", "",
    ]

    /// One to six pieces of the lists above, joined.
    public static func path(_ random: inout SplitMix64) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: text += directives.randomElement(using: &random)!
            case 1: text += controls.randomElement(using: &random)!
            default: text += pieces.randomElement(using: &random)!
            }
        }
        return text
    }
}

/// Argument vectors for a command with the given options and flags: known and unknown options,
/// `--name=value` and `--name value` forms, short aliases, values hostile and ordinary, positionals.
public struct ArgumentGenerator: Sendable {
    public let options: [String]
    public let flags: [String]
    public let aliases: [String]

    public init(options: some Sequence<String>, flags: some Sequence<String>, aliases: some Sequence<String>) {
        self.options = options.sorted()
        self.flags = flags.sorted()
        self.aliases = aliases.sorted()
    }

    /// Values an option may get: numbers at and past every limit, sizes, durations, rectangles, paths.
    public static let values = [
        "0", "1", "-1", "5", "100", "101", "10000", "10001", "1000000", "99999999999999999999", "1e308", "-1e308", "nan", "inf", "-0",
        "0.5", "2.5", "1.5m", "500ms", "2s", "3h", "0x10", "", " ", "1280x720", "0x0", "16384x16384", "-1x5", "1280x", "x720",
        "0,0,1,1", "0.1,0.1,0.5,0.5", "nan,0,1,1", "1,1,1,1", "0,0,1", "jpeg", "png", "gif", "qr", "ean-13,qr", "zbar", "zxing",
        "test-pattern", "test-tone", "file:/etc/passwd", "/dev/video0", "default", "-", "--", "--json",
    ]

    public func next(_ random: inout SplitMix64) -> [String] {
        var arguments: [String] = []
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            func value() -> String {
                Int.random(in: 0..<3, using: &random) == 0 ? HostileText.path(&random) : Self.values.randomElement(using: &random)!
            }
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3 where !options.isEmpty:
                let name = options.randomElement(using: &random)!
                if Bool.random(using: &random) { arguments += ["--" + name, value()] } else { arguments.append("--\(name)=\(value())") }
            case 4 where !options.isEmpty:  // an option without its value, at the end
                arguments.append("--" + options.randomElement(using: &random)!)
            case 5 where !flags.isEmpty:
                let flag = flags.randomElement(using: &random)!
                arguments.append(Bool.random(using: &random) ? "--" + flag : "--\(flag)=\(value())")
            case 6 where !aliases.isEmpty:
                arguments += ["-" + aliases.randomElement(using: &random)!, value()]
            case 7:  // unknown or misspelt
                arguments.append(["--nope", "-x", "---json", "--=", "-", "--", "--input=", "--\u{0}"].randomElement(using: &random)!)
            default:  // a positional
                arguments.append(value())
            }
        }
        return arguments
    }
}
