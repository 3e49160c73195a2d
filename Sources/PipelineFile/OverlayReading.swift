import Capture

/// Reading `overlay`, `add-overlay`, `set-overlay` and `remove-overlay` statements.
extension Checker {
    /// The overlay keys of a statement; nil when one of them has an error.
    mutating func overlayFields(_ statement: Statement) -> OverlayFields? {
        let errorsBefore = sink.count
        var fields = OverlayFields()
        fields.text = text(statement, "text", allowEmpty: true)
        if let field = statement.field("clock") {
            switch field.value {
            case .bool(true): fields.clock = .time
            case .bool(false):
                error(
                    "clock=false draws nothing: leave clock out, or give one of true, \(Suggest.list(CaptureOverlay.ClockStyle.allCases.map(\.rawValue)))",
                    at: field.keyLocation)
            default: fields.clock = choice(statement, "clock", CaptureOverlay.ClockStyle.self)
            }
        }
        fields.image = text(statement, "image")
        if let image = fields.image, ValueSyntax.pathExtension(image) != "png" {
            error("image must be a PNG file (.png), got '\(image)'", at: statement.location(of: "image"))
        }
        fields.width = number(statement, "width", 0...1, excludingLower: true, meaning: "a fraction of the frame's width")
        fields.rectangle = rect(statement, "rectangle")
        fields.line = parsed(statement, "line", mustBe: "< x0, y0, x1, y1 > in normalized coordinates (each 0-1)") { value in
            ValueSyntax.points(value).flatMap { $0.count == 2 ? $0 : nil }
        }
        fields.polygon = parsed(statement, "polygon", mustBe: "< x0, y0, x1, y1, x2, y2 ... >: three points or more in normalized coordinates (each 0-1)") {
            value in
            ValueSyntax.points(value).flatMap { $0.count >= 3 ? $0 : nil }
        }
        fields.font = text(statement, "font")
        fields.size = number(statement, "size", 0...1, excludingLower: true, meaning: "a text's height as a fraction of the frame's height")
        fields.color = colour(statement, "color")
        fields.background = colour(statement, "background")
        fields.lineWidth = number(statement, "line-width", 0...0.5, excludingLower: true, meaning: "a fraction of the frame's height")
        fields.fill = colour(statement, "fill")
        fields.position = parsed(
            statement, "position", mustBe: "one of \(Suggest.list(CaptureOverlay.Position.named.map(\.name))) or a point < x, y > (each 0-1)"
        ) { value in
            if case .string(let word) = value { return CaptureOverlay.Position.named.first { $0.name == word }?.position }
            return ValueSyntax.point(value).map { CaptureOverlay.Position.point(x: $0.x, y: $0.y) }
        }
        fields.alpha = number(statement, "alpha", 0...1, meaning: "0 transparent, 1 opaque")
        let content = fields.contentKeys
        if content.count > 1 {
            error("an overlay draws one thing: \(content.joined(separator: " and ")) were both given (use one overlay for each)", at: statement.location)
        }
        return sink.count == errorsBefore ? fields : nil
    }

    /// `color=`, `background=`, `fill=`: `#RRGGBB`, `#RRGGBBAA`, a colour name or `none`.
    mutating func colour(_ statement: Statement, _ key: String) -> OverlayColor? {
        let names = OverlayColor.names.keys.sorted()
        return parsed(statement, key, mustBe: "#RRGGBB, #RRGGBBAA, none or one of \(names.joined(separator: ", "))") { value in
            guard case .string(let word) = value else { return nil }
            return word == "none" ? OverlayColor(red: 0, green: 0, blue: 0, alpha: 0) : OverlayColor(parsing: word)
        }
    }

    /// `output=` of an overlay statement (or `highlight=` of a metadata output): a name or a list of
    /// names (nil when missing or wrong).
    mutating func overlayOutputs(_ statement: Statement, key: String = "output") -> [String]? {
        guard let field = statement.field(key) else { return nil }
        let items: [(word: String?, text: String, location: SourceLocation)]
        switch field.value {
        case .list, .array: items = Self.listItems(field)
        default: items = [(text(statement, key), field.text, field.valueLocation)]
        }
        var outputs: [String] = []
        for item in items {
            guard let word = item.word, Vocabulary.isValidName(word) else {
                error("\(key) must name outputs (a name or a list like { preview, movie }), got \(item.text)", at: item.location)
                return nil
            }
            if !outputs.contains(word) { outputs.append(word) }
            // A declaration's outputs are declarations too; an action's may be added by the scenario.
            if statement.name == "overlay" || statement.name == "output" {
                overlayTargets.append((word, item.location))
            } else if word != "preview" {
                outputMentions.append((word, item.location, statement.name))
            }
        }
        if outputs.isEmpty { error("\(key) must name at least one output", at: field.keyLocation) }
        return outputs.isEmpty ? nil : outputs
    }

    /// An `overlay` declaration (or `add-overlay`): outputs, a name (a declaration without one is
    /// named `overlay<index>`; `add-overlay`, with no index, must give one), one thing to draw.
    mutating func readOverlay(_ statement: Statement, index: Int?) -> OverlayDeclaration? {
        let errorsBefore = sink.count
        if statement.field("output") == nil {
            missing("output", in: statement, subject: "'\(statement.name)'", hint: "the output it draws on, like output=preview")
        }
        if statement.field("name") == nil && index == nil {
            missing("name", in: statement, subject: "'\(statement.name)'", hint: "the overlay's name, for set-overlay and remove-overlay")
        }
        let outputs = overlayOutputs(statement)
        let name = self.name(statement) ?? (statement.field("name") == nil ? index.map { "overlay\($0)" } : nil)
        let fields = overlayFields(statement)
        if let fields, fields.contentKeys.isEmpty {
            error("the overlay draws nothing: give text=, clock=, image=, rectangle=, line= or polygon=", at: statement.location)
        }
        guard let outputs, let name, let fields, sink.count == errorsBefore else { return nil }
        return OverlayDeclaration(name: name, outputs: outputs, fields: fields, location: statement.location)
    }

    /// `set-overlay`: a name, optional outputs, at least one key to change.
    mutating func readOverlayChange(_ statement: Statement) -> OverlayDeclaration? {
        let errorsBefore = sink.count
        if statement.field("name") == nil { missing("name", in: statement, subject: "'set-overlay'", hint: "the overlay to change") }
        let name = self.name(statement)
        let outputs = statement.field("output") == nil ? [] : overlayOutputs(statement)
        let fields = overlayFields(statement)
        if fields == OverlayFields() {
            error("set-overlay changes nothing: give the keys to change (\(Vocabulary.overlayFieldKeys.joined(separator: ", ")))", at: statement.location)
        }
        guard let name, let outputs, let fields, sink.count == errorsBefore else { return nil }
        return OverlayDeclaration(name: name, outputs: outputs, fields: fields, location: statement.location)
    }
}
