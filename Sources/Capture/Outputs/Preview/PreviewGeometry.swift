import Foundation

/// How the preview's video fills its view, like `AVLayerVideoGravity`.
public enum VideoGravity: String, Sendable, CaseIterable {
    /// The whole frame, its aspect ratio kept, centered; the rest of the view is black (letterbox or
    /// pillarbox). AVFoundation's default, `.resizeAspect`.
    case resizeAspect = "resize-aspect"
    /// The whole view, the aspect ratio kept: the frame is scaled to cover the view and its overflow
    /// cropped, centered. `.resizeAspectFill`.
    case resizeAspectFill = "resize-aspect-fill"
    /// The frame stretched to the view's size, whatever its aspect ratio. `.resize`.
    case resize
}

/// A point in a view's own coordinates (pixels from its top-left corner), like a `CGPoint` in a layer.
public struct ViewPoint: Hashable, Sendable, CustomStringConvertible {
    /// Pixels from the view's left edge.
    public var x: Double
    /// Pixels from the view's top edge.
    public var y: Double
    /// A point `x` pixels right and `y` pixels down from the view's top-left corner.
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    /// `(x, y)` to one decimal.
    public var description: String { String(format: "(%.1f, %.1f)", x, y) }
}

/// A rectangle in a view's own coordinates, like a `CGRect` in a layer.
public struct ViewRect: Hashable, Sendable, CustomStringConvertible {
    /// The left edge, in pixels from the view's left edge.
    public var x: Double
    /// The top edge, in pixels from the view's top edge.
    public var y: Double
    /// The width in pixels.
    public var width: Double
    /// The height in pixels.
    public var height: Double
    /// A rectangle whose top-left corner is at `x`, `y`, `width` by `height` pixels.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    /// `<x, y, width, height>` to one decimal.
    public var description: String { String(format: "<%.1f, %.1f, %.1f, %.1f>", x, y, width, height) }
}

/// Where a preview's video lies in its view, and how a point in the view maps to the camera's frame:
/// pure arithmetic over the frame's size, the view's size, the gravity and the connection's rotation and
/// mirroring, shared by the branch (what it scales, pads and crops) and by the point conversions.
///
/// The camera's normalized coordinates are those of its frame as the device delivers it, before any
/// rotation or mirroring: (0, 0) top-left, (1, 1) bottom-right, as `focusPointOfInterest`,
/// `rectOfInterest` and the metadata output's corners use them.
public struct PreviewGeometry: Hashable, Sendable {
    /// The camera's frame size as the branch receives it (before rotation).
    public var frameSize: Size
    /// The view's size in pixels.
    public var viewSize: Size
    /// How the video fills the view.
    public var gravity: VideoGravity
    /// Clockwise rotation of the connection: 0, 90, 180 or 270.
    public var rotation: Int
    /// Whether the connection mirrors the video horizontally.
    public var isMirrored: Bool

    /// The geometry of a `frameSize` frame shown in a `viewSize` view.
    public init(frameSize: Size, viewSize: Size, gravity: VideoGravity = .resizeAspect, rotation: Int = 0, isMirrored: Bool = false) {
        self.frameSize = frameSize
        self.viewSize = viewSize
        self.gravity = gravity
        self.rotation = rotation
        self.isMirrored = isMirrored
    }

    /// The frame's size once rotated (what the view shows).
    public var shownFrameSize: Size {
        rotation == 90 || rotation == 270 ? Size(width: frameSize.height, height: frameSize.width) : frameSize
    }

    /// The size the rotated frame is scaled to, in whole pixels (even, for the pixel formats that
    /// subsample): the view's size for `resize`, the largest size inside the view for `resizeAspect`,
    /// the smallest size covering it for `resizeAspectFill`.
    public var scaledSize: Size {
        let shown = shownFrameSize
        guard shown.width > 0, shown.height > 0, viewSize.width > 0, viewSize.height > 0 else { return viewSize }
        let horizontal = Double(viewSize.width) / Double(shown.width)
        let vertical = Double(viewSize.height) / Double(shown.height)
        let scale: Double
        switch gravity {
        case .resize: return viewSize
        case .resizeAspect: scale = min(horizontal, vertical)
        case .resizeAspectFill: scale = max(horizontal, vertical)
        }
        // The side that meets the view's edge is exact; the other is rounded to an even size, at least 2.
        func side(_ length: Int, exact: Int, exactAxis: Bool) -> Int {
            if exactAxis { return exact }
            let rounded = Int((Double(length) * scale / 2).rounded()) * 2
            return max(2, rounded)
        }
        let widthExact = gravity == .resizeAspect ? horizontal <= vertical : horizontal >= vertical
        return Size(
            width: side(shown.width, exact: viewSize.width, exactAxis: widthExact),
            height: side(shown.height, exact: viewSize.height, exactAxis: !widthExact))
    }

    /// Where the scaled video lies in the view, in view pixels: inside it for `resizeAspect` (the bars
    /// around it are black), beyond it on two sides for `resizeAspectFill` (that overflow is cropped).
    public var videoRect: ViewRect {
        let scaled = scaledSize
        return ViewRect(
            x: Double((viewSize.width - scaled.width) / 2), y: Double((viewSize.height - scaled.height) / 2),
            width: Double(scaled.width), height: Double(scaled.height))
    }

    /// The borders the branch's `videobox` adds (negative: black bars) or crops (positive) on each side,
    /// in pixels of the scaled video, so that its output is exactly the view's size.
    public var box: (left: Int, right: Int, top: Int, bottom: Int) {
        let scaled = scaledSize
        let left = (scaled.width - viewSize.width) / 2
        let top = (scaled.height - viewSize.height) / 2
        return (left, scaled.width - viewSize.width - left, top, scaled.height - viewSize.height - top)
    }

    /// The point of the camera's frame (normalized, before rotation and mirroring) shown at `point` of
    /// the view, as `captureDevicePointConverted(fromLayerPoint:)` gives it. Points on the black bars of
    /// `resizeAspect` map outside 0...1.
    public func devicePoint(fromViewPoint point: ViewPoint) -> NormalizedPoint {
        let rect = videoRect
        guard rect.width > 0, rect.height > 0 else { return NormalizedPoint(x: 0.5, y: 0.5) }
        var u = (point.x - rect.x) / rect.width
        let v = (point.y - rect.y) / rect.height
        if isMirrored { u = 1 - u }
        switch rotation {
        case 90: return NormalizedPoint(x: v, y: 1 - u)
        case 180: return NormalizedPoint(x: 1 - u, y: 1 - v)
        case 270: return NormalizedPoint(x: 1 - v, y: u)
        default: return NormalizedPoint(x: u, y: v)
        }
    }

    /// The point of the view that shows `point` of the camera's frame (normalized, before rotation and
    /// mirroring), as `layerPointConverted(fromCaptureDevicePoint:)` gives it. Points cropped away by
    /// `resizeAspectFill` map outside the view.
    public func viewPoint(fromDevicePoint point: NormalizedPoint) -> ViewPoint {
        var u: Double
        let v: Double
        switch rotation {
        case 90: (u, v) = (1 - point.y, point.x)
        case 180: (u, v) = (1 - point.x, 1 - point.y)
        case 270: (u, v) = (point.y, 1 - point.x)
        default: (u, v) = (point.x, point.y)
        }
        if isMirrored { u = 1 - u }
        let rect = videoRect
        return ViewPoint(x: rect.x + u * rect.width, y: rect.y + v * rect.height)
    }

    /// The rectangle of the camera's frame (normalized) that a rectangle of the view shows, as
    /// `metadataOutputRectConverted(fromLayerRect:)` gives it: the smallest normalized rectangle
    /// holding the converted corners.
    public func deviceRect(fromViewRect rect: ViewRect) -> NormalizedRect {
        let a = devicePoint(fromViewPoint: ViewPoint(x: rect.x, y: rect.y))
        let b = devicePoint(fromViewPoint: ViewPoint(x: rect.x + rect.width, y: rect.y + rect.height))
        let bounds = Self.bounds((a.x, a.y), (b.x, b.y))
        return NormalizedRect(x: bounds.x, y: bounds.y, width: bounds.width, height: bounds.height)
    }

    /// The rectangle of the view that shows a normalized rectangle of the camera's frame, as
    /// `layerRectConverted(fromMetadataOutputRect:)` gives it.
    public func viewRect(fromDeviceRect rect: NormalizedRect) -> ViewRect {
        let a = viewPoint(fromDevicePoint: NormalizedPoint(x: rect.x, y: rect.y))
        let b = viewPoint(fromDevicePoint: NormalizedPoint(x: rect.x + rect.width, y: rect.y + rect.height))
        let bounds = Self.bounds((a.x, a.y), (b.x, b.y))
        return ViewRect(x: bounds.x, y: bounds.y, width: bounds.width, height: bounds.height)
    }

    /// The rectangle with opposite corners `a` and `b` (a turn or a mirror may swap them).
    private static func bounds(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> (x: Double, y: Double, width: Double, height: Double) {
        (min(a.x, b.x), min(a.y, b.y), abs(b.x - a.x), abs(b.y - a.y))
    }
}
