import Capture

/// Typed reading of statement fields, each reporting a located, explanatory error when the value
/// does not fit. Errors point at the key (list items: at the item).
extension Checker {
    /// Reports keys the statement does not take and keys given twice.
    mutating func checkKeys(_ statement: Statement, allowed: [String], subject: String, otherKindHint: (String) -> String? = { _ in nil }) {
        var seen: [String: SourceLocation] = [:]
        for field in statement.fields {
            if let first = seen[field.key] {
                error("the key '\(field.key)' is given twice (first at \(first.lineColumn)); give it once", at: field.keyLocation)
                continue
            }
            seen[field.key] = field.keyLocation
            guard !allowed.contains(field.key) else { continue }
            let hint = otherKindHint(field.key).map { " (\($0))" } ?? ""
            let keys = allowed.isEmpty ? "it takes no keys" : "allowed keys: " + allowed.joined(separator: ", ")
            error("unknown key '\(field.key)' for \(subject)\(hint)\(Suggest.didYouMean(field.key, allowed)); \(keys)", at: field.keyLocation)
        }
    }

    mutating func missing(_ key: String, in statement: Statement, subject: String, hint: String) {
        error("missing required key '\(key)' for \(subject) (\(hint))", at: statement.location)
    }

    /// "got 0" / "got "90" (a string: write quality=90 without quotes)".
    func got(_ field: Field, numberExpected: Bool = false) -> String {
        var text = "got \(field.text)"
        if numberExpected, field.isQuoted, case .string(let inner) = field.value, Double(inner) != nil {
            text += " (a string: write \(field.key)=\(inner) without quotes)"
        }
        return text
    }

    /// A single textual value. Unquoted words GStreamer read as numbers or booleans are taken as written.
    mutating func text(_ statement: Statement, _ key: String, allowEmpty: Bool = false) -> String? {
        guard let field = statement.field(key) else { return nil }
        let result: String
        switch field.value {
        case .string(let string): result = string
        case .int, .double, .bool, .fraction: result = field.text
        case .list, .array, .unsupported:
            error("\(key) must be a single value, \(got(field))", at: field.keyLocation)
            return nil
        }
        if result.isEmpty && !allowEmpty {
            error("\(key) must not be empty", at: field.keyLocation)
            return nil
        }
        return result
    }

    /// A name of an input or output (Capture's naming rule).
    mutating func name(_ statement: Statement, _ key: String = "name") -> String? {
        guard let name = text(statement, key) else { return nil }
        guard Vocabulary.isValidName(name) else {
            error("the name '\(name)' must start with a letter and hold only letters, digits, '-' and '_'", at: statement.location(of: key))
            return nil
        }
        return name
    }

    /// One of a fixed set of words.
    mutating func choice(_ statement: Statement, _ key: String, _ allowed: [String]) -> String? {
        guard let field = statement.field(key), let word = text(statement, key) else { return nil }
        guard allowed.contains(word) else {
            error("\(key) must be \(Suggest.list(allowed)), got \(field.text)\(Suggest.didYouMean(word, allowed))", at: field.keyLocation)
            return nil
        }
        return word
    }

    mutating func choice<Word: RawRepresentable & CaseIterable>(_ statement: Statement, _ key: String, _ type: Word.Type) -> Word?
    where Word.RawValue == String {
        choice(statement, key, type.allCases.map(\.rawValue)).flatMap(Word.init(rawValue:))
    }

    /// An X11 window id: an integer, written in decimal or as xwininfo prints it (`0x1e00007`).
    mutating func windowHandle(_ statement: Statement, _ key: String) -> UInt? {
        guard let field = statement.field(key) else { return nil }
        let value: Int?
        switch field.value {
        case .string(let text) where text.lowercased().hasPrefix("0x"): value = Int(text.dropFirst(2), radix: 16)
        default: value = ValueSyntax.integer(field.value)
        }
        guard let value, value > 0, value <= Int(UInt32.max) else {
            error("\(key) must be an X11 window id (as xwininfo prints it, e.g. 0x1e00007), \(got(field, numberExpected: true))", at: field.keyLocation)
            return nil
        }
        return UInt(value)
    }

    mutating func integer(_ statement: Statement, _ key: String, _ range: ClosedRange<Int>) -> Int? {
        guard let field = statement.field(key) else { return nil }
        guard let value = ValueSyntax.integer(field.value), range.contains(value) else {
            let bounds = range.upperBound == Int.max ? "\(range.lowerBound) or more" : "from \(range.lowerBound) to \(range.upperBound)"
            error("\(key) must be an integer \(bounds), \(got(field, numberExpected: true))", at: field.keyLocation)
            return nil
        }
        return value
    }

    mutating func number(_ statement: Statement, _ key: String, _ range: ClosedRange<Double>, excludingLower: Bool = false, meaning: String? = nil) -> Double? {
        guard let field = statement.field(key) else { return nil }
        guard let value = ValueSyntax.number(field.value), range.contains(value), !(excludingLower && value == range.lowerBound) else {
            let bounds: String
            switch (excludingLower, range.upperBound == .greatestFiniteMagnitude) {
            case (true, true): bounds = "above \(format(range.lowerBound))"
            case (false, true): bounds = "of \(format(range.lowerBound)) or more"
            case (true, false): bounds = "above \(format(range.lowerBound)) and up to \(format(range.upperBound))"
            case (false, false): bounds = "from \(format(range.lowerBound)) to \(format(range.upperBound))"
            }
            error("\(key) must be a number \(bounds)\(meaning.map { " (\($0))" } ?? ""), \(got(field, numberExpected: true))", at: field.keyLocation)
            return nil
        }
        return value
    }

    func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    mutating func boolean(_ statement: Statement, _ key: String) -> Bool? {
        guard let field = statement.field(key) else { return nil }
        guard case .bool(let value) = field.value else {
            error("\(key) must be true or false, \(got(field))", at: field.keyLocation)
            return nil
        }
        return value
    }

    /// Reads `key` through `parse`; a value it refuses is reported as "KEY must be WHAT, got ...".
    mutating func parsed<Value>(_ statement: Statement, _ key: String, mustBe what: String, _ parse: (PipelineValue) -> Value?) -> Value? {
        guard let field = statement.field(key) else { return nil }
        guard let value = parse(field.value) else {
            error("\(key) must be \(what), \(got(field))", at: field.keyLocation)
            return nil
        }
        return value
    }

    mutating func duration(_ statement: Statement, _ key: String, positive: Bool = false) -> Duration? {
        let what = positive ? "a positive number of seconds" : "a number of seconds"
        let limit = format(ValueSyntax.maxSeconds)
        return parsed(statement, key, mustBe: "\(what) up to \(limit) (2.5) or a string with a unit (\"500ms\", \"2s\", \"1.5m\")") { value in
            ValueSyntax.duration(value).flatMap { positive && $0 == .zero ? nil : $0 }
        }
    }

    mutating func size(_ statement: Statement, _ key: String) -> Size? {
        parsed(statement, key, mustBe: "WIDTHxHEIGHT like \"1280x720\" (each from 1 to \(ValueSyntax.maxDimension))", ValueSyntax.size)
    }

    mutating func byteSize(_ statement: Statement, _ key: String, positive: Bool) -> Int64? {
        parsed(statement, key, mustBe: "a byte size: an integer number of bytes or a string with a unit (\"50MB\", \"1.5GB\", \"512KiB\")") { value in
            ValueSyntax.byteSize(value).flatMap { positive && $0 == 0 ? nil : $0 }
        }
    }

    mutating func bitrate(_ statement: Statement, _ key: String) -> Int? {
        parsed(statement, key, mustBe: "bits per second: an integer or a string with a unit (\"4Mbps\", \"800kbps\")", ValueSyntax.bitrate)
    }

    mutating func frameRate(_ statement: Statement, _ key: String) -> FrameRate? {
        parsed(statement, key, mustBe: "frames per second above 0 and up to 1000: 30, 29.97 or 30000/1001", ValueSyntax.frameRate)
    }

    mutating func rect(_ statement: Statement, _ key: String) -> NormalizedRect? {
        parsed(
            statement, key, mustBe: "< x, y, width, height > in normalized coordinates (each 0-1, width and height above 0, inside the frame)", ValueSyntax.rect
        )
    }

    mutating func point(_ statement: Statement, _ key: String) -> NormalizedPoint? {
        parsed(statement, key, mustBe: "< x, y > in normalized coordinates (each 0-1)", ValueSyntax.point)
    }

    mutating func choices<Word: RawRepresentable & CaseIterable & Equatable>(_ statement: Statement, _ key: String, _ type: Word.Type) -> [Word]?
    where Word.RawValue == String {
        guard let field = statement.field(key) else { return nil }
        let allowed = type.allCases.map(\.rawValue)
        let items: [(word: String?, text: String, location: SourceLocation)]
        switch field.value {
        case .list, .array:
            items = Self.listItems(field)
            guard !items.isEmpty else {
                error("\(key) must list at least one of \(Suggest.list(allowed)); leave \(key) out for all of them", at: field.keyLocation)
                return nil
            }
        default:
            guard let word = text(statement, key) else { return nil }
            items = [(word, field.text, field.valueLocation)]
        }
        var result: [Word] = []
        var failed = false
        for item in items {
            guard let word = item.word, let value = Word(rawValue: word) else {
                error(
                    "\(key) holds \(item.text), which is not one of \(Suggest.list(allowed))\(Suggest.didYouMean(item.word ?? item.text, allowed))",
                    at: item.location)
                failed = true
                continue
            }
            if result.contains(value) {
                error("\(key) lists \(word) twice", at: item.location)
                failed = true
                continue
            }
            result.append(value)
        }
        return failed ? nil : result
    }

    /// The items of a list or array value: each item's string (nil when it is not a string), its text
    /// as written, and where it is.
    static func listItems(_ field: Field) -> [(word: String?, text: String, location: SourceLocation)] {
        field.items.map { item in
            if case .string(let word) = item.value { return (word, item.text, item.location) }
            return (nil, item.text, item.location)
        }
    }

    /// `expect-error=true|false|ERROR-NAME`. `canFail` is false for statements that never fail.
    mutating func expectedError(_ statement: Statement, canFail: Bool) -> ExpectedError? {
        guard let field = statement.field("expect-error") else { return nil }
        let result: ExpectedError?
        switch field.value {
        case .bool(let flag):
            result = flag ? .any : nil
        case .string(let name):
            guard Vocabulary.errorNames.contains(name) else {
                error(
                    "expect-error must be true, false or an error name, got \(field.text)\(Suggest.didYouMean(name, Vocabulary.errorNames)); error names: \(Vocabulary.errorNames.joined(separator: ", "))",
                    at: field.keyLocation)
                return nil
            }
            result = .named(name)
        default:
            error("expect-error must be true, false or an error name (like device-busy), \(got(field))", at: field.keyLocation)
            return nil
        }
        if result != nil && !canFail {
            error("'\(statement.name)' cannot fail, so it cannot carry expect-error\(canFailHint(statement.name))", at: field.keyLocation)
            return nil
        }
        return result
    }

    private func canFailHint(_ name: String) -> String {
        switch name {
        case "begin-configuration": "; put expect-error on commit-configuration, where the block is applied"
        case "repeat": "; put expect-error on the repeated statement that should fail"
        case "wait": "; a wait with duration= always succeeds (a wait with event= can time out)"
        default: ""
        }
    }
}
