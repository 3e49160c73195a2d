import Foundation

/// Something drawn into an output's video: a text, a running clock, a PNG picture or shapes, placed
/// on the frame with an opacity. An overlay belongs to the outputs it is added to
/// (`CaptureOutput.addOverlay(_:)`): on a preview it is only seen; on a photo or movie output it is
/// burned into the files; the other outputs never see it.
///
/// Overlays are drawn on the pixels the output receives, after its scaling, rotation and mirroring,
/// so positions and sizes are in the output's own frame: normalized 0–1, origin at the top-left
/// corner. Sizes are fractions of the frame's height (texts, lines) or width (pictures), so an overlay
/// looks the same on a 640x480 preview and a 4K photo.
///
/// ```swift
/// try preview.addOverlay(CaptureOverlay(name: "flash", content: .text("Flash: Auto"), position: .topLeft))
/// try preview.updateOverlay(named: "flash") { $0.content = .text("Flash: On") }
/// ```
public struct CaptureOverlay: Hashable, Sendable {
    /// The overlay's name on its output (`set-overlay, name=` in a `.pipeline` file).
    public var name: String
    /// What the overlay draws: a text, a clock, a picture or shapes.
    public var content: Content
    /// Where the overlay goes (shapes are placed by their own points and ignore it).
    public var position: Position
    /// 0 transparent to 1 opaque, applied to everything the overlay draws.
    public var opacity: Double

    /// An overlay named `name` drawing `content` at `position` (top left by default), fully opaque unless `opacity` says less.
    public init(name: String, content: Content, position: Position = .topLeft, opacity: Double = 1) {
        self.name = name
        self.content = content
        self.position = position
        self.opacity = opacity
    }

    /// What an overlay draws.
    public enum Content: Hashable, Sendable {
        /// A line (or lines) of text, drawn as it is (no markup).
        case text(String, style: TextStyle = TextStyle())
        /// A clock drawn fresh on every frame.
        case clock(ClockStyle, style: TextStyle = TextStyle())
        /// A PNG picture with its alpha; `width` is the fraction of the frame's width it spans (its
        /// height follows its aspect ratio); nil draws it at its own pixel size.
        case image(path: String, width: Double? = nil)
        /// Rectangles, lines and polygons in normalized frame coordinates.
        case shapes([Shape], style: ShapeStyle = ShapeStyle())
    }

    /// How a text or a clock looks.
    public struct TextStyle: Hashable, Sendable {
        /// A font family installed on the machine (`fc-list : family`); "Sans", "Serif" and
        /// "Monospace" always resolve. Optionally followed by style words: "DejaVu Sans Bold".
        public var font: String
        /// The height of a line of text as a fraction of the frame's height.
        public var size: Double
        /// The colour of the text (white by default).
        public var color: OverlayColor
        /// A box drawn behind the text (nil: none).
        public var background: OverlayColor?

        /// A text style; by default white Sans, a line 5% of the frame's height, on a black box at 60% opacity.
        public init(
            font: String = "Sans", size: Double = 0.05, color: OverlayColor = .white,
            background: OverlayColor? = OverlayColor(red: 0, green: 0, blue: 0, alpha: 0.6)
        ) {
            self.font = font
            self.size = size
            self.color = color
            self.background = background
        }
    }

    /// What a clock shows.
    public enum ClockStyle: String, Hashable, Sendable, CaseIterable {
        /// The local time of day, `14:03:27`.
        case time
        /// The local date and time, `2026-12-01 14:03:27`.
        case dateTime = "date-time"
        /// The local time with milliseconds, `14:03:27.481` (glass-to-glass latency checks).
        case milliseconds = "time-ms"
        /// The frame's running time in the session, `0:01:02.133`.
        case running
    }

    /// Where an overlay goes on the frame.
    public enum Position: Hashable, Sendable {
        /// The named positions: a corner, the middle of an edge, or the centre of the frame, kept 2% of the
        /// frame's height from its edges.
        case topLeft, top, topRight, left, center, right, bottomLeft, bottom, bottomRight
        /// The overlay's top-left corner at a point of the frame, normalized 0–1.
        case point(x: Double, y: Double)

        /// The named positions as `.pipeline` files spell them.
        public static let named: [(name: String, position: Position)] = [
            ("top-left", .topLeft), ("top", .top), ("top-right", .topRight), ("left", .left), ("center", .center),
            ("right", .right), ("bottom-left", .bottomLeft), ("bottom", .bottom), ("bottom-right", .bottomRight),
        ]
    }

    /// A shape, in normalized frame coordinates.
    public enum Shape: Hashable, Sendable {
        /// A rectangle.
        case rectangle(NormalizedRect)
        /// A straight line between two points.
        case line(from: NormalizedPoint, to: NormalizedPoint)
        /// A closed polygon of three points or more.
        case polygon([NormalizedPoint])
    }

    /// How shapes are drawn.
    public struct ShapeStyle: Hashable, Sendable {
        /// The colour of the outlines (green by default; nil: none).
        public var stroke: OverlayColor?
        /// The stroke's width as a fraction of the frame's height.
        public var lineWidth: Double
        /// The colour shapes are filled with (nil, the default: not filled).
        public var fill: OverlayColor?

        /// A shape style; by default green outlines 0.6% of the frame's height wide, not filled.
        public init(stroke: OverlayColor? = .green, lineWidth: Double = 0.006, fill: OverlayColor? = nil) {
            self.stroke = stroke
            self.lineWidth = lineWidth
            self.fill = fill
        }
    }

    /// Checks every value the overlay draws with and reads what it needs from outside (its font, its
    /// picture); throws what is wrong, naming the overlay and the setting.
    public func validate() throws(CaptureError) {
        _ = try OverlayRenderer.prepare(self)
    }
}

/// A colour with alpha, each component 0–1.
public struct OverlayColor: Hashable, Sendable, CustomStringConvertible {
    /// The red component, 0–1.
    public var red: Double
    /// The green component, 0–1.
    public var green: Double
    /// The blue component, 0–1.
    public var blue: Double
    /// The opacity, 0 transparent to 1 opaque.
    public var alpha: Double

    /// A colour of the components given, opaque unless `alpha` says less.
    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Opaque white.
    public static let white = OverlayColor(red: 1, green: 1, blue: 1)
    /// Opaque black.
    public static let black = OverlayColor(red: 0, green: 0, blue: 0)
    /// Opaque red.
    public static let red = OverlayColor(red: 1, green: 0, blue: 0)
    /// Opaque green.
    public static let green = OverlayColor(red: 0, green: 1, blue: 0)
    /// Opaque blue.
    public static let blue = OverlayColor(red: 0, green: 0, blue: 1)
    /// Opaque yellow.
    public static let yellow = OverlayColor(red: 1, green: 1, blue: 0)

    /// The colour names `init?(parsing:)` knows.
    public static let names: [String: OverlayColor] = [
        "white": .white, "black": .black, "red": .red, "green": .green, "blue": .blue, "yellow": .yellow,
        "cyan": OverlayColor(red: 0, green: 1, blue: 1), "magenta": OverlayColor(red: 1, green: 0, blue: 1),
        "gray": OverlayColor(red: 0.5, green: 0.5, blue: 0.5), "orange": OverlayColor(red: 1, green: 0.65, blue: 0),
        "transparent": OverlayColor(red: 0, green: 0, blue: 0, alpha: 0),
    ]

    /// `#RRGGBB`, `#RRGGBBAA` or a name of `names`; nil for anything else.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        if let named = Self.names[lowered] { self = named; return }
        guard lowered.first == "#", [7, 9].contains(lowered.count) else { return nil }
        let digits = Array(lowered.dropFirst())
        var components: [Double] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let value = UInt8(String(digits[index...index + 1]), radix: 16) else { return nil }
            components.append(Double(value) / 255)
        }
        self.init(red: components[0], green: components[1], blue: components[2], alpha: components.count == 4 ? components[3] : 1)
    }

    /// `#RRGGBB` or `#RRGGBBAA` (what `init?(parsing:)` reads back).
    public var description: String {
        let bytes = [red, green, blue] + (alpha < 1 ? [alpha] : [])
        return "#"
            + bytes.map { value in
                let byte = Int((min(1, max(0, value)) * 255).rounded())
                return String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
            }.joined()
    }
}
