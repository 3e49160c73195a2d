import GStreamer

/// A turn of a frame: `rotation` degrees clockwise, then mirrored left to right (the order a
/// connection's `rotation` and `isMirrored` apply in). Either done to the pixels (`videoflip`) or
/// written as a tag that viewers apply: EXIF Orientation in a photo, the track matrix in a movie.
struct PixelTurn: Hashable, Sendable {
    var rotation = 0
    var mirrored = false

    static let none = PixelTurn()

    var isNone: Bool { rotation == 0 && !mirrored }
    /// True when the turn swaps width and height.
    var swapsSides: Bool { rotation == 90 || rotation == 270 }

    /// The GStreamer `image-orientation` tag asking a viewer for this turn ("rotate-90",
    /// "flip-rotate-270" ...). GStreamer's flips come first: a turn then a mirror is a mirror then the
    /// opposite turn.
    var imageOrientation: String { mirrored ? "flip-rotate-\((360 - rotation) % 360)" : "rotate-\(rotation)" }

    /// The EXIF Orientation value of the same turn (1 upright ... 8), as GStreamer's EXIF writer maps
    /// `imageOrientation`.
    var exifOrientation: Int {
        switch (mirrored, rotation) {
        case (false, 90): 6
        case (false, 180): 3
        case (false, 270): 8
        case (true, 0): 2
        case (true, 90): 5
        case (true, 180): 4
        case (true, 270): 7
        default: 1
        }
    }

    /// The `image-orientation` tag of an EXIF Orientation value (nil for a value outside 1...8).
    static func imageOrientation(exif: Int) -> String? {
        let all = [false, true].flatMap { mirrored in [0, 90, 180, 270].map { PixelTurn(rotation: $0, mirrored: mirrored) } }
        return all.first { $0.exifOrientation == exif }?.imageOrientation
    }

    /// The videoflip elements that make this turn in the pixels (`video-direction`: the older `method`
    /// property is ignored by GStreamer 1.22 when set from a description).
    func elements(prefix: String) -> [ElementSpec] {
        var elements: [ElementSpec] = []
        switch rotation {
        case 90: elements.append(ElementSpec("videoflip", name: "\(prefix)_rotate", [("video-direction", "90r")]))
        case 180: elements.append(ElementSpec("videoflip", name: "\(prefix)_rotate", [("video-direction", "180")]))
        case 270: elements.append(ElementSpec("videoflip", name: "\(prefix)_rotate", [("video-direction", "90l")]))
        default: break
        }
        if mirrored { elements.append(ElementSpec("videoflip", name: "\(prefix)_mirror", [("video-direction", "horiz")])) }
        return elements
    }

    /// Where the pixel (x, y) of the turned frame (`width` x `height`, as shown) comes from in the
    /// frame before the turn (as stored).
    func source(x: Int, y: Int, width: Int, height: Int) -> (x: Int, y: Int) {
        let x = mirrored ? width - 1 - x : x
        switch rotation {
        case 90: return (y, width - 1 - x)
        case 180: return (width - 1 - x, height - 1 - y)
        case 270: return (height - 1 - y, x)
        default: return (x, y)
        }
    }

    /// A picture drawn on the frame as shown, moved and turned onto the frame as stored, so that the
    /// viewer's turn shows it upright where it was drawn.
    func storing(_ picture: OverlayPicture, shownWidth: Int, shownHeight: Int) -> OverlayPicture {
        guard !isNone, picture.width > 0, picture.height > 0 else { return picture }
        let first = source(x: picture.x, y: picture.y, width: shownWidth, height: shownHeight)
        let last = source(x: picture.x + picture.width - 1, y: picture.y + picture.height - 1, width: shownWidth, height: shownHeight)
        let origin = (x: min(first.x, last.x), y: min(first.y, last.y))
        let (width, height) = swapsSides ? (picture.height, picture.width) : (picture.width, picture.height)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for row in 0..<picture.height {
            for column in 0..<picture.width {
                let stored = source(x: picture.x + column, y: picture.y + row, width: shownWidth, height: shownHeight)
                let from = row * picture.stride + column * 4, to = ((stored.y - origin.y) * width + stored.x - origin.x) * 4
                pixels[to..<to + 4] = picture.pixels[from..<from + 4]
            }
        }
        return OverlayPicture(pixels: pixels, width: width, height: height, stride: width * 4, x: origin.x, y: origin.y, opacity: picture.opacity)
    }
}
