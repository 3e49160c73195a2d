import CPangoCairo
import Foundation
import GStreamer

/// An overlay checked and ready to draw: its picture decoded, its font resolved.
struct PreparedOverlay: Sendable {
    let overlay: CaptureOverlay
    /// The PNG's pixels, premultiplied BGRA, for an image overlay.
    let image: OverlayImage?
}

/// A PNG decoded once into premultiplied BGRA pixels (cairo's ARGB32).
struct OverlayImage: Sendable, Hashable {
    let pixels: [UInt8]
    let width: Int
    let height: Int
    let stride: Int
}

/// Draws overlays into premultiplied BGRA pictures with Cairo and Pango. Pure apart from reading fonts
/// and picture files in `prepare`: the same overlay on the same frame size gives the same pixels.
///
/// Text is laid out with `pango_layout_set_text` (never as markup): a user's text is drawn, not read.
/// Pango's default font map is per thread, so every streaming thread draws with its own.
enum OverlayRenderer {
    /// The families every fontconfig setup resolves to some font.
    static let genericFamilies: Set<String> = ["sans", "sans-serif", "serif", "monospace", "mono", "system-ui"]

    /// Validates an overlay and reads what it draws from outside (font, picture).
    static func prepare(_ overlay: CaptureOverlay) throws(CaptureError) -> PreparedOverlay {
        let name = overlay.name
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) }) else {
            throw .invalidOverlay(overlay: name, key: "name", reason: "must be a non-empty name without control characters")
        }
        guard (0...1).contains(overlay.opacity) else {
            throw .invalidOverlay(overlay: name, key: "opacity", reason: "must be between 0 and 1, not \(overlay.opacity)")
        }
        if case .point(let x, let y) = overlay.position, !(0...1).contains(x) || !(0...1).contains(y) {
            throw .invalidOverlay(overlay: name, key: "position", reason: "must be a point with both coordinates between 0 and 1, not <\(x), \(y)>")
        }
        switch overlay.content {
        case .text(_, let style), .clock(_, let style):
            try check(style, overlay: name)
            return PreparedOverlay(overlay: overlay, image: nil)
        case .image(let path, let width):
            if let width, !(width > 0 && width <= 1) {
                throw .invalidOverlay(overlay: name, key: "width", reason: "must be a fraction of the frame's width above 0 and at most 1, not \(width)")
            }
            return PreparedOverlay(overlay: overlay, image: try decodePNG(path, overlay: name))
        case .shapes(let shapes, let style):
            guard !shapes.isEmpty else { throw .invalidOverlay(overlay: name, key: "shapes", reason: "must hold at least one shape") }
            guard style.stroke != nil || style.fill != nil else {
                throw .invalidOverlay(overlay: name, key: "color", reason: "is missing: give a stroke colour, a fill colour or both")
            }
            guard style.lineWidth > 0 && style.lineWidth <= 0.5 else {
                throw .invalidOverlay(
                    overlay: name, key: "line-width", reason: "must be a fraction of the frame's height above 0 and at most 0.5, not \(style.lineWidth)")
            }
            for shape in shapes { try check(shape, overlay: name) }
            return PreparedOverlay(overlay: overlay, image: nil)
        }
    }

    private static func check(_ style: CaptureOverlay.TextStyle, overlay: String) throws(CaptureError) {
        guard style.size > 0 && style.size <= 1 else {
            throw .invalidOverlay(overlay: overlay, key: "size", reason: "must be a fraction of the frame's height above 0 and at most 1, not \(style.size)")
        }
        let family = fontFamily(of: style.font)
        guard !family.isEmpty else { throw .invalidOverlay(overlay: overlay, key: "font", reason: "must name a font family") }
        let known = installedFamilies()
        let wanted = family.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let knownLowercased = Set(known.map { $0.lowercased() })
        guard wanted.contains(where: { genericFamilies.contains($0) || knownLowercased.contains($0) }) else {
            throw .unknownFont(overlay: overlay, font: family, known: known.sorted())
        }
    }

    private static func check(_ shape: CaptureOverlay.Shape, overlay: String) throws(CaptureError) {
        let inside: (NormalizedPoint) -> Bool = { (0...1).contains($0.x) && (0...1).contains($0.y) }
        switch shape {
        case .rectangle(let rect):
            guard rect.isValid else {
                throw .invalidOverlay(
                    overlay: overlay, key: "rectangle", reason: "must lie inside the frame (0-1) with a width and height above 0, not \(rect)")
            }
        case .line(let from, let to):
            guard inside(from), inside(to) else {
                throw .invalidOverlay(overlay: overlay, key: "line", reason: "must join two points inside the frame (0-1), not \(from) and \(to)")
            }
        case .polygon(let points):
            guard points.count >= 3 else {
                throw .invalidOverlay(overlay: overlay, key: "polygon", reason: "needs at least three points, not \(points.count)")
            }
            if let outside = points.first(where: { !inside($0) }) {
                throw .invalidOverlay(overlay: overlay, key: "polygon", reason: "has a point outside the frame (0-1): \(outside)")
            }
        }
    }

    /// The family part of a font description ("DejaVu Sans Bold" -> "DejaVu Sans").
    static func fontFamily(of font: String) -> String {
        guard let description = pango_font_description_from_string(font) else { return "" }
        defer { pango_font_description_free(description) }
        return pango_font_description_get_family(description).map { String(cString: $0) } ?? ""
    }

    /// The font families installed on this machine, read once.
    static func installedFamilies() -> [String] { familyCache }

    private static let familyCache: [String] = {
        guard let map = pango_cairo_font_map_get_default() else { return [] }
        var families: UnsafeMutablePointer<UnsafeMutablePointer<PangoFontFamily>?>?
        var count: Int32 = 0
        pango_font_map_list_families(map, &families, &count)
        defer { g_free(families) }
        var names: [String] = []
        for index in 0..<Int(count) {
            if let family = families?[index], let name = pango_font_family_get_name(family) { names.append(String(cString: name)) }
        }
        return names
    }()

    static func decodePNG(_ path: String, overlay: String) throws(CaptureError) -> OverlayImage {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw .overlayImageUnreadable(overlay: overlay, path: path, reason: "no such file")
        }
        guard !isFolder.boolValue else { throw .overlayImageUnreadable(overlay: overlay, path: path, reason: "it is a folder") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .overlayImageUnreadable(overlay: overlay, path: path, reason: "no permission to read it")
        }
        // Refuse devices and pipes: only a regular file is read.
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard (attributes?[.type] as? FileAttributeType) == .typeRegular else {
            throw .overlayImageUnreadable(overlay: overlay, path: path, reason: "it is not a regular file")
        }
        // cairo says "out of memory" for anything that is not a PNG: look at the file's signature first.
        let head = MediaFiles.head(path, bytes: 64) ?? []
        guard head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            let what = MediaFiles.imageHeader(head)?.format == "jpeg" || head.starts(with: [0xFF, 0xD8, 0xFF]) ? "a JPEG picture" : "not a PNG picture"
            throw .overlayImageUnreadable(overlay: overlay, path: path, reason: "it is \(what); overlay images are PNG files (convert it to PNG)")
        }
        guard let surface = cairo_image_surface_create_from_png(path) else {
            throw .overlayImageUnreadable(overlay: overlay, path: path, reason: "it could not be opened")
        }
        defer { cairo_surface_destroy(surface) }
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            let reason = status == CAIRO_STATUS_READ_ERROR ? "it is not a PNG picture (or it is truncated)" : String(cString: cairo_status_to_string(status))
            throw .overlayImageUnreadable(overlay: overlay, path: path, reason: reason)
        }
        // Any PNG comes back as ARGB32 (alpha) or RGB24 (no alpha, the fourth byte unused): make it ARGB32.
        let width = Int(cairo_image_surface_get_width(surface)), height = Int(cairo_image_surface_get_height(surface))
        guard width > 0, height > 0, width <= 8192, height <= 8192 else {
            throw .overlayImageUnreadable(overlay: overlay, path: path, reason: "its size \(width)x\(height) is outside 1x1 to 8192x8192")
        }
        let picture = draw(width: width, height: height) { context in
            cairo_set_source_surface(context, surface, 0, 0)
            cairo_paint(context)
        }
        return OverlayImage(pixels: picture.pixels, width: width, height: height, stride: picture.stride)
    }

    // MARK: Drawing

    /// The picture of one overlay on a frame of `width` x `height` pixels; `clockText` is the text a
    /// clock shows on this frame. Nil when the overlay draws nothing there (an empty text).
    static func render(_ prepared: PreparedOverlay, width frameWidth: Int, height frameHeight: Int, clockText: String? = nil) -> OverlayPicture? {
        let overlay = prepared.overlay
        var picture: (pixels: [UInt8], width: Int, height: Int, stride: Int, x: Int, y: Int)?
        switch overlay.content {
        case .text(let text, let style):
            picture = renderText(text, style: style, frameHeight: frameHeight).map { ($0.pixels, $0.width, $0.height, $0.stride, 0, 0) }
        case .clock(_, let style):
            picture = renderText(clockText ?? "", style: style, frameHeight: frameHeight).map { ($0.pixels, $0.width, $0.height, $0.stride, 0, 0) }
        case .image(_, let widthFraction):
            guard let image = prepared.image else { return nil }
            picture = renderImage(image, widthFraction: widthFraction, frameWidth: frameWidth)
        case .shapes(let shapes, let style):
            guard let drawn = renderShapes(shapes, style: style, frameWidth: frameWidth, frameHeight: frameHeight) else { return nil }
            return OverlayPicture(
                pixels: drawn.pixels, width: drawn.width, height: drawn.height, stride: drawn.stride, x: drawn.x, y: drawn.y,
                opacity: overlay.opacity)
        }
        guard let picture else { return nil }
        let origin = place(overlay.position, width: picture.width, height: picture.height, frameWidth: frameWidth, frameHeight: frameHeight)
        return OverlayPicture(
            pixels: picture.pixels, width: picture.width, height: picture.height, stride: picture.stride,
            x: origin.x, y: origin.y, opacity: overlay.opacity)
    }

    /// The top-left corner of a picture at a position, with a margin of 2% of the frame's height
    /// from the edges for the named positions.
    static func place(_ position: CaptureOverlay.Position, width: Int, height: Int, frameWidth: Int, frameHeight: Int) -> (x: Int, y: Int) {
        let margin = Int((Double(frameHeight) * 0.02).rounded())
        let left = margin, centreX = (frameWidth - width) / 2, right = frameWidth - width - margin
        let top = margin, centreY = (frameHeight - height) / 2, bottom = frameHeight - height - margin
        switch position {
        case .topLeft: return (left, top)
        case .top: return (centreX, top)
        case .topRight: return (right, top)
        case .left: return (left, centreY)
        case .center: return (centreX, centreY)
        case .right: return (right, centreY)
        case .bottomLeft: return (left, bottom)
        case .bottom: return (centreX, bottom)
        case .bottomRight: return (right, bottom)
        case .point(let x, let y): return (Int((x * Double(frameWidth)).rounded()), Int((y * Double(frameHeight)).rounded()))
        }
    }

    private static func renderText(
        _ text: String, style: CaptureOverlay.TextStyle, frameHeight: Int
    ) -> (pixels: [UInt8], width: Int, height: Int, stride: Int)? {
        guard !text.isEmpty else { return nil }
        let pixelSize = max(6, style.size * Double(frameHeight))
        guard let description = pango_font_description_from_string(style.font) else { return nil }
        defer { pango_font_description_free(description) }
        pango_font_description_set_absolute_size(description, pixelSize * Double(PANGO_SCALE))
        // Measure on a scratch surface, then draw on one of the text's size.
        var textWidth: Int32 = 0, textHeight: Int32 = 0
        withLayout(text, font: description) { layout in pango_layout_get_pixel_size(layout, &textWidth, &textHeight) }
        let padding = Int((pixelSize * 0.25).rounded())
        let width = Int(textWidth) + 2 * padding, height = Int(textHeight) + 2 * padding
        guard width > 0, height > 0, width <= 16384, height <= 16384 else { return nil }
        let drawn = draw(width: width, height: height) { context in
            if let background = style.background {
                setColor(context, background)
                cairo_paint(context)
            }
            setColor(context, style.color)
            cairo_move_to(context, Double(padding), Double(padding))
            guard let layout = pango_cairo_create_layout(context) else { return }
            defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
            pango_layout_set_font_description(layout, description)
            pango_layout_set_text(layout, text, -1)
            pango_cairo_show_layout(context, layout)
        }
        return (drawn.pixels, width, height, drawn.stride)
    }

    /// Lays out `text` on a scratch context (to measure it).
    private static func withLayout(_ text: String, font: OpaquePointer, _ body: (OpaquePointer) -> Void) {
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1) else { return }
        defer { cairo_surface_destroy(surface) }
        guard let context = cairo_create(surface) else { return }
        defer { cairo_destroy(context) }
        guard let layout = pango_cairo_create_layout(context) else { return }
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        pango_layout_set_font_description(layout, font)
        pango_layout_set_text(layout, text, -1)
        body(layout)
    }

    private static func renderImage(
        _ image: OverlayImage, widthFraction: Double?, frameWidth: Int
    ) -> (pixels: [UInt8], width: Int, height: Int, stride: Int, x: Int, y: Int)? {
        guard let widthFraction else { return (image.pixels, image.width, image.height, image.stride, 0, 0) }
        let width = max(1, Int((widthFraction * Double(frameWidth)).rounded()))
        let height = max(1, Int((Double(width) * Double(image.height) / Double(image.width)).rounded()))
        var pixels = image.pixels
        return pixels.withUnsafeMutableBytes { bytes -> (pixels: [UInt8], width: Int, height: Int, stride: Int, x: Int, y: Int)? in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                let source = cairo_image_surface_create_for_data(base, CAIRO_FORMAT_ARGB32, Int32(image.width), Int32(image.height), Int32(image.stride))
            else { return nil }
            defer { cairo_surface_destroy(source) }
            let drawn = draw(width: width, height: height) { context in
                cairo_scale(context, Double(width) / Double(image.width), Double(height) / Double(image.height))
                cairo_set_source_surface(context, source, 0, 0)
                cairo_pattern_set_filter(cairo_get_source(context), CAIRO_FILTER_GOOD)
                cairo_paint(context)
            }
            return (drawn.pixels, width, height, drawn.stride, 0, 0)
        }
    }

    private static func renderShapes(
        _ shapes: [CaptureOverlay.Shape], style: CaptureOverlay.ShapeStyle, frameWidth: Int, frameHeight: Int
    )
        -> (pixels: [UInt8], width: Int, height: Int, stride: Int, x: Int, y: Int)?
    {
        let lineWidth = max(1, style.lineWidth * Double(frameHeight))
        func pixel(_ point: NormalizedPoint) -> (Double, Double) { (point.x * Double(frameWidth), point.y * Double(frameHeight)) }
        var points: [(Double, Double)] = []
        for shape in shapes {
            switch shape {
            case .rectangle(let rect):
                points += [pixel(NormalizedPoint(x: rect.x, y: rect.y)), pixel(NormalizedPoint(x: rect.x + rect.width, y: rect.y + rect.height))]
            case .line(let from, let to): points += [pixel(from), pixel(to)]
            case .polygon(let corners): points += corners.map(pixel)
            }
        }
        // The picture covers the shapes and half a line around them, clipped to the frame.
        let reach = lineWidth / 2 + 1
        let minX = max(0, Int((points.map(\.0).min()! - reach).rounded(.down))), minY = max(0, Int((points.map(\.1).min()! - reach).rounded(.down)))
        let maxX = min(frameWidth, Int((points.map(\.0).max()! + reach).rounded(.up))),
            maxY = min(frameHeight, Int((points.map(\.1).max()! + reach).rounded(.up)))
        let width = maxX - minX, height = maxY - minY
        guard width > 0, height > 0 else { return nil }
        let drawn = draw(width: width, height: height) { context in
            cairo_translate(context, -Double(minX), -Double(minY))
            cairo_set_line_width(context, lineWidth)
            cairo_set_line_join(context, CAIRO_LINE_JOIN_ROUND)
            for shape in shapes {
                switch shape {
                case .rectangle(let rect):
                    let (x, y) = pixel(NormalizedPoint(x: rect.x, y: rect.y))
                    cairo_rectangle(context, x, y, rect.width * Double(frameWidth), rect.height * Double(frameHeight))
                case .line(let from, let to):
                    let (x0, y0) = pixel(from), (x1, y1) = pixel(to)
                    cairo_move_to(context, x0, y0)
                    cairo_line_to(context, x1, y1)
                case .polygon(let corners):
                    for (index, corner) in corners.enumerated() {
                        let (x, y) = pixel(corner)
                        if index == 0 { cairo_move_to(context, x, y) } else { cairo_line_to(context, x, y) }
                    }
                    cairo_close_path(context)
                }
                if let fill = style.fill, !isLine(shape) {
                    setColor(context, fill)
                    if style.stroke != nil { cairo_fill_preserve(context) } else { cairo_fill(context) }
                }
                if let stroke = style.stroke {
                    setColor(context, stroke)
                    cairo_stroke(context)
                } else {
                    cairo_new_path(context)
                }
            }
        }
        return (drawn.pixels, width, height, drawn.stride, minX, minY)
    }

    private static func isLine(_ shape: CaptureOverlay.Shape) -> Bool {
        if case .line = shape { return true }
        return false
    }

    private static func setColor(_ context: OpaquePointer, _ color: OverlayColor) {
        cairo_set_source_rgba(context, color.red, color.green, color.blue, color.alpha)
    }

    /// Draws on a transparent ARGB32 surface of that size and returns its pixels.
    private static func draw(width: Int, height: Int, _ body: (OpaquePointer) -> Void) -> (pixels: [UInt8], stride: Int) {
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)) else { return ([], 0) }
        defer { cairo_surface_destroy(surface) }
        if let context = cairo_create(surface) {
            body(context)
            cairo_destroy(context)
        }
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        guard let data = cairo_image_surface_get_data(surface) else { return ([], 0) }
        return (Array(UnsafeBufferPointer(start: data, count: stride * height)), stride)
    }
}
