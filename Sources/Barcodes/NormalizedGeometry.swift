import Foundation

/// A point in normalized coordinates of a frame: 0...1 on both axes, origin at the top-left corner.
public struct NormalizedPoint: Hashable, Sendable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    public var description: String { String(format: "(%.4f, %.4f)", x, y) }
}

/// A rectangle in normalized coordinates of the frame (0...1, origin top-left).
public struct NormalizedRect: Hashable, Sendable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public static let full = NormalizedRect(x: 0, y: 0, width: 1, height: 1)
    public var isValid: Bool {
        x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= 1.000001 && y + height <= 1.000001
    }
    public var description: String { "<\(x), \(y), \(width), \(height)>" }
}
