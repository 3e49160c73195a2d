import PipelineFile
/// A small command-line parser: `--flag`, `--option VALUE`, `--option=VALUE`, `-o VALUE`, positionals.
struct Arguments {
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// - Parameters:
    ///   - options: names (without dashes) that take a value; `aliases` maps short names to long ones.
    ///   - flags: names that take no value.
    init(_ arguments: [String], options: Set<String>, flags flagNames: Set<String>, aliases: [String: String] = [:]) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var name = String(argument.drop { $0 == "-" })
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            name = aliases[name] ?? name
            if flagNames.contains(name) {
                guard inlineValue == nil else { throw UsageError(description: "--\(name) takes no value") }
                flags.insert(name)
            } else if options.contains(name) {
                let value: String
                if let inlineValue { value = inlineValue } else {
                    guard index < arguments.count else { throw UsageError(description: "--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                values[name, default: []].append(value)
            } else {
                let known = (options.union(flagNames)).sorted().map { "--\($0)" }.joined(separator: ", ")
                throw UsageError(description: "unknown option '\(argument)'" + (known.isEmpty ? "" : " (known: \(known))"))
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func value(_ name: String) -> String? { values[name]?.last }

    /// A duration option (`2.5`, `"500ms"`, `"2s"`, `"1.5m"`), positive unless `zero` is allowed, up to
    /// the longest a `.pipeline` duration may be; anything else is a usage error that says the range.
    func duration(_ name: String, zero: Bool = false) throws(UsageError) -> Duration? {
        guard let text = value(name) else { return nil }
        guard let value = PipelineValues.duration(text), zero || value > .zero else {
            let limit = String(Int(PipelineValues.maximumSeconds))
            throw UsageError(description: "--\(name) takes \(zero ? "0" : "a positive number of seconds") up to \(limit) s: 2.5, \"500ms\", \"2s\" or \"1.5m\", not '\(text)'")
        }
        return value
    }
    func all(_ name: String) -> [String] { values[name] ?? [] }

    func int(_ name: String, range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(description: "--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }
}
