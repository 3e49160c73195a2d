import Foundation

/// A point in normalized coordinates of a frame: 0...1 on both axes, origin at the top-left corner.
public struct NormalizedPoint: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The horizontal position: 0 at the left edge, 1 at the right edge.
    public var x: Double
    /// The vertical position: 0 at the top edge, 1 at the bottom edge.
    public var y: Double
    /// A point at `x`, `y` (each 0...1).
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    /// The coordinates to four decimals: `(0.2500, 0.5000)`.
    public var description: String { String(format: "(%.4f, %.4f)", x, y) }
}

/// A rectangle in normalized coordinates of the frame (0...1, origin top-left).
public struct NormalizedRect: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The left edge: 0 at the frame's left edge, 1 at its right edge.
    public var x: Double
    /// The top edge: 0 at the frame's top edge, 1 at its bottom edge.
    public var y: Double
    /// The width as a fraction of the frame's width.
    public var width: Double
    /// The height as a fraction of the frame's height.
    public var height: Double
    /// A rectangle whose top-left corner is at `x`, `y`, all values fractions of the frame.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    /// The whole frame: `<0, 0, 1, 1>`.
    public static let full = NormalizedRect(x: 0, y: 0, width: 1, height: 1)
    /// True when the rectangle has a positive size and lies within the frame.
    public var isValid: Bool {
        x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= 1.000001 && y + height <= 1.000001
    }
    /// The values as `<x, y, width, height>`.
    public var description: String { "<\(x), \(y), \(width), \(height)>" }
}
