/// Applies `--set NAME.KEY=VALUE` overrides to the statements of a file, before they are checked.
/// Each override is line N of a source named `--set`, so its errors are located like a file's.
struct OverrideApplier {
    private(set) var statements: [Statement]
    let source: SourceText
    private(set) var problems: [(String, SourceLocation)] = []

    init(statements: [Statement], source: SourceText) {
        self.statements = statements
        self.source = source
    }

    /// Statements that declare a name an override can address.
    static let namedStatements: Set<String> = ["input", "output", "add-input", "add-output"]

    mutating func apply() -> [Statement] {
        for (index, text) in source.lines.enumerated() {
            apply(text, line: index + 1)
        }
        return statements
    }

    private func location(line: Int, column: Int) -> SourceLocation {
        SourceLocation(file: source.name, line: line, column: column)
    }

    private mutating func apply(_ text: String, line: Int) {
        let scalars = Array(text.unicodeScalars)
        // What a file may not hold, an override may not either (the document is written back as a file).
        if let bad = scalars.firstIndex(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
            problems.append(
                (
                    "control character U+\(String(scalars[bad].value, radix: 16, uppercase: true).leftPadded(to: 4)) in the override; remove it",
                    location(line: line, column: bad + 1)
                ))
            return
        }
        guard let equals = scalars.firstIndex(of: "="), let dot = scalars[..<equals].firstIndex(of: "."), dot > 0, dot + 1 < equals else {
            problems.append(("expected NAME.KEY=VALUE, like camera.device=test-pattern or session.preset=hd1280x720", location(line: line, column: 1)))
            return
        }
        let name = String(String.UnicodeScalarView(scalars[..<dot]))
        let key = String(String.UnicodeScalarView(scalars[(dot + 1)..<equals]))
        let value = String(String.UnicodeScalarView(scalars[(equals + 1)...]))
        let keyColumn = dot + 2
        let valueColumn = equals + 2
        guard key != "name" else {
            problems.append(("the name of '\(name)' cannot be changed with --set (statements refer to it)", location(line: line, column: keyColumn)))
            return
        }
        let target: Int
        if name == "session" {
            if let found = statements.firstIndex(where: { $0.name == "session" }) {
                target = found
            } else {
                statements.insert(Statement(name: "session", location: location(line: line, column: 1), fields: []), at: 0)
                target = 0
            }
        } else if let found = statements.firstIndex(where: { Self.namedStatements.contains($0.name) && $0.field("name")?.value.description == name }) {
            target = found
        } else {
            let names = statements.filter { Self.namedStatements.contains($0.name) }.compactMap { $0.field("name")?.value.description }
            let known = names.isEmpty ? "the file declares no input or output" : "names in this file: " + names.joined(separator: ", ")
            problems.append(
                (
                    "--set names '\(name)', but no input or output is named '\(name)'\(Suggest.didYouMean(name, names)); \(known); use session.preset=... for the session",
                    location(line: line, column: 1)
                ))
            return
        }
        let field = Self.field(key: key, value: value, line: line, keyColumn: keyColumn, valueColumn: valueColumn, file: source.name)
        statements[target].fields.removeAll { $0.key == key }
        statements[target].fields.append(field)
    }

    /// The override's value read like a value in a file; a value the structure parser cannot read
    /// alone (`a b.jpg` from a shell that removed the quotes) is taken as a string, as written.
    static func field(key: String, value: String, line: Int, keyColumn: Int, valueColumn: Int, file: String) -> Field {
        let keyLocation = SourceLocation(file: file, line: line, column: keyColumn)
        let valueLocation = SourceLocation(file: file, line: line, column: valueColumn)
        let prefix = Array("x, ".utf8)
        let body = Array("\(key)=\(value)".utf8)
        let bodyColumns = SourceSplitter.scalarColumns(body)
        let positions =
            prefix.map { _ in SourceLocation(file: file, line: line, column: 1) }
            + bodyColumns.map { SourceLocation(file: file, line: line, column: keyColumn + $0 - 1) }
        let logical = LogicalStatement(
            bytes: prefix + body, positions: positions,
            endPosition: SourceLocation(file: file, line: line, column: keyColumn + (bodyColumns.last ?? 0)))
        if case .statement(let statement) = StatementReader.read(logical, isKnown: { _ in true }),
            statement.fields.count == 1, let field = statement.fields.first, field.key == key
        {
            return field
        }
        return Field(key: key, value: .string(value), text: value, keyLocation: keyLocation, valueLocation: valueLocation)
    }
}
