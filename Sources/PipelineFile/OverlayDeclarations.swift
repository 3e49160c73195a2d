import Capture
import Foundation

/// An `overlay` declaration (or `add-overlay` / `set-overlay` action): what is drawn, on which
/// outputs, under which name. Maps onto `CaptureOutput.addOverlay(_:)` / `updateOverlay(named:_:)`.
public struct OverlayDeclaration: Hashable, Sendable {
    /// `name=` (declarations without one are named `overlay1`, `overlay2` ... in file order).
    public var name: String
    /// `output=`: a name or a list of names; `preview` also means the session's preview outputs. Empty
    /// in `set-overlay` / `remove-overlay`: every output that has an overlay of that name.
    public var outputs: [String]
    /// What the overlay draws and how (for `set-overlay`, only what changes).
    public var fields: OverlayFields
    /// Where the declaration or action is written, for diagnostics; takes no part in equality.
    @IgnoredInEquality public var location: SourceLocation?

    /// An overlay on outputs.
    public init(name: String, outputs: [String], fields: OverlayFields, location: SourceLocation? = nil) {
        self.name = name
        self.outputs = outputs
        self.fields = fields
        self.location = location
    }
}

/// The keys of an overlay: one thing to draw (`text`, `clock`, `image`, `rectangle`, `line`,
/// `polygon`) and how it looks and where it goes. Every key is optional: `set-overlay` changes only
/// the keys it gives. Texts may hold `{flash-mode}`, `{camera}` and `{recording}`, which the runner
/// replaces with the session's state and keeps up to date.
public struct OverlayFields: Hashable, Sendable {
    /// `text=`: a text to draw (may hold `{flash-mode}`, `{camera}` and `{recording}`).
    public var text: String?
    /// `clock=`: a clock to draw, in this style (`clock=true` is `time`).
    public var clock: CaptureOverlay.ClockStyle?
    /// `image=`: the path of a PNG file to draw.
    public var image: String?
    /// `width=`: an image's width as a fraction of the frame's width.
    public var width: Double?
    /// `rectangle=< x, y, width, height >`: a rectangle to draw, in normalized coordinates.
    public var rectangle: NormalizedRect?
    /// `line=< x0, y0, x1, y1 >`.
    public var line: [NormalizedPoint]?
    /// `polygon=< x0, y0, x1, y1, x2, y2 ... >`.
    public var polygon: [NormalizedPoint]?
    /// `font=`: a text's font family ("Sans", "Serif", "Monospace" ...).
    public var font: String?
    /// `size=`: a text's line height as a fraction of the frame's height.
    public var size: Double?
    /// `color=`: a text's colour, or a shape's stroke (`none`: shapes are only filled).
    public var color: OverlayColor?
    /// `background=`: the box behind a text (`none`: no box).
    public var background: OverlayColor?
    /// `line-width=`: a shape's stroke width as a fraction of the frame's height.
    public var lineWidth: Double?
    /// `fill=`: a shape's fill colour.
    public var fill: OverlayColor?
    /// `position=`: where the overlay goes, a named position (`top-left` ...) or a point `< x, y >`.
    public var position: CaptureOverlay.Position?
    /// `alpha=`: the overlay's opacity.
    public var alpha: Double?

    /// Overlay keys; each one not given stays nil.
    /// - Parameters:
    ///   - text: `text=`.
    ///   - clock: `clock=`.
    ///   - image: `image=`.
    ///   - width: `width=`.
    ///   - rectangle: `rectangle=`.
    ///   - line: `line=`.
    ///   - polygon: `polygon=`.
    ///   - font: `font=`.
    ///   - size: `size=`.
    ///   - color: `color=`.
    ///   - background: `background=`.
    ///   - lineWidth: `line-width=`.
    ///   - fill: `fill=`.
    ///   - position: `position=`.
    ///   - alpha: `alpha=`.
    public init(
        text: String? = nil, clock: CaptureOverlay.ClockStyle? = nil, image: String? = nil, width: Double? = nil,
        rectangle: NormalizedRect? = nil, line: [NormalizedPoint]? = nil, polygon: [NormalizedPoint]? = nil,
        font: String? = nil, size: Double? = nil, color: OverlayColor? = nil, background: OverlayColor? = nil,
        lineWidth: Double? = nil, fill: OverlayColor? = nil, position: CaptureOverlay.Position? = nil, alpha: Double? = nil
    ) {
        self.text = text
        self.clock = clock
        self.image = image
        self.width = width
        self.rectangle = rectangle
        self.line = line
        self.polygon = polygon
        self.font = font
        self.size = size
        self.color = color
        self.background = background
        self.lineWidth = lineWidth
        self.fill = fill
        self.position = position
        self.alpha = alpha
    }

    /// The content keys given (at most one is allowed).
    public var contentKeys: [String] {
        [
            ("text", text != nil), ("clock", clock != nil), ("image", image != nil), ("rectangle", rectangle != nil),
            ("line", line != nil), ("polygon", polygon != nil),
        ].filter(\.1).map(\.0)
    }

    /// The overlay these keys declare (nil when they give nothing to draw).
    public func overlay(named name: String, resolvingPath resolve: (String) -> String = { $0 }) -> CaptureOverlay? {
        guard !contentKeys.isEmpty else { return nil }
        return applied(to: CaptureOverlay(name: name, content: .text("")), resolvingPath: resolve)
    }

    /// `overlay` with these keys changed; the others keep their values.
    public func applied(to overlay: CaptureOverlay, resolvingPath resolve: (String) -> String = { $0 }) -> CaptureOverlay {
        var result = overlay
        var textStyle = CaptureOverlay.TextStyle(), shapeStyle = CaptureOverlay.ShapeStyle()
        var imageWidth: Double?
        switch overlay.content {
        case .text(_, let style), .clock(_, let style): textStyle = style
        case .shapes(_, let style): shapeStyle = style
        case .image(_, let width): imageWidth = width
        }
        if let font { textStyle.font = font }
        if let size { textStyle.size = size }
        if let color { textStyle.color = color; shapeStyle.stroke = color.alpha == 0 ? nil : color }
        if let background { textStyle.background = background.alpha == 0 ? nil : background }
        if let lineWidth { shapeStyle.lineWidth = lineWidth }
        if let fill { shapeStyle.fill = fill.alpha == 0 ? nil : fill }
        if let width { imageWidth = width }
        if let text {
            result.content = .text(text, style: textStyle)
        } else if let clock {
            result.content = .clock(clock, style: textStyle)
        } else if let image {
            result.content = .image(path: resolve(image), width: imageWidth)
        } else if let shapes = shapes {
            result.content = .shapes(shapes, style: shapeStyle)
        } else {
            switch overlay.content {
            case .text(let text, _): result.content = .text(text, style: textStyle)
            case .clock(let clock, _): result.content = .clock(clock, style: textStyle)
            case .image(let path, _): result.content = .image(path: path, width: imageWidth)
            case .shapes(let shapes, _): result.content = .shapes(shapes, style: shapeStyle)
            }
        }
        if let position { result.position = position }
        if let alpha { result.opacity = alpha }
        return result
    }

    private var shapes: [CaptureOverlay.Shape]? {
        if let rectangle { return [.rectangle(rectangle)] }
        if let line, line.count == 2 { return [.line(from: line[0], to: line[1])] }
        if let polygon { return [.polygon(polygon)] }
        return nil
    }
}
