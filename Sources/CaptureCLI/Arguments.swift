import Capture
import PipelineFile

/// A small command-line parser: `--flag`, `--option VALUE`, `--option=VALUE`, `-o VALUE`, positionals.
package struct Arguments {
    /// A usage mistake. Its text quotes what the user typed, with control characters escaped so that
    /// a value cannot forge lines of output.
    package struct UsageError: Error, CustomStringConvertible {
        package let description: String
        package init(description: String) { self.description = FileNaming.printable(description) }
    }

    /// The options (taking a value) and flags of a command, and its short aliases ("o" for "output").
    package struct Spec: Sendable {
        package var options: Set<String>
        package var flags: Set<String> = []
        package var aliases: [String: String] = [:]
    }

    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// - Parameters:
    ///   - options: names (without dashes) that take a value; `aliases` maps short names to long ones.
    ///   - flags: names that take no value.
    package init(_ arguments: [String], _ spec: Spec) throws(UsageError) {
        let options = spec.options, flagNames = spec.flags, aliases = spec.aliases
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
                if let inlineValue {
                    value = inlineValue
                } else {
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

    package func flag(_ name: String) -> Bool { flags.contains(name) }
    package func value(_ name: String) -> String? { values[name]?.last }

    /// A duration option (`2.5`, `"500ms"`, `"2s"`, `"1.5m"`), positive unless `zero` is allowed, up to
    /// the longest a `.pipeline` duration may be; anything else is a usage error that says the range.
    package func duration(_ name: String, zero: Bool = false) throws(UsageError) -> Duration? {
        guard let text = value(name) else { return nil }
        guard let value = PipelineValues.duration(text), zero || value > .zero else {
            let limit = String(Int(PipelineValues.maximumSeconds))
            throw UsageError(
                description:
                    "--\(name) takes \(zero ? "0" : "a positive number of seconds") up to \(limit) s: 2.5, \"500ms\", \"2s\" or \"1.5m\", not '\(text)'")
        }
        return value
    }
    func all(_ name: String) -> [String] { values[name] ?? [] }

    /// Fails when there is any positional argument.
    package func noPositionals() throws(UsageError) {
        if let first = positionals.first { throw UsageError(description: "unexpected argument '\(first)'") }
    }

    /// A size option (`1280x720`).
    func size(_ name: String) throws(UsageError) -> Size? {
        guard let text = value(name) else { return nil }
        guard let size = Size(parsing: text) else { throw UsageError(description: "--\(name) must look like 1280x720, not '\(text)'") }
        return size
    }

    /// A rectangle in normalized coordinates (`X,Y,W,H`, inside 0-1).
    func normalizedRect(_ name: String) throws(UsageError) -> NormalizedRect? {
        guard let text = value(name) else { return nil }
        let values = text.split(separator: ",", omittingEmptySubsequences: false).compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard values.count == 4, NormalizedRect(x: values[0], y: values[1], width: values[2], height: values[3]).isValid else {
            throw UsageError(description: "--\(name) must be X,Y,W,H inside 0-1, not '\(text)'")
        }
        return NormalizedRect(x: values[0], y: values[1], width: values[2], height: values[3])
    }

    package func int(_ name: String, range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(description: "--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }
}
