import CGtk
import Capture
import CaptureControl
import CaptureGTK
import Foundation

// MARK: Crop (recipe 9-1's editing step)

/// The crop step: the photo with a crop rectangle (drag to draw it, or a preset); Use returns the
/// original and the edited image, both saved to the album; Cancel leaves nothing behind (after a
/// shot, the shot itself is deleted).
@MainActor
final class CropPage {
    weak var app: CameraApp?
    let widget: Widget
    private let title = Make.label("Move and Scale")
    private let picture = Make.picture().expand()
    private var area: Widget!
    private var path = ""
    private var afterShot = false
    private var imageSize = Size(width: 1, height: 1)
    /// The crop, normalized to the photo.
    private(set) var rect = NormalizedRect(x: 0, y: 0, width: 1, height: 1)
    private var dragStart: (Double, Double)?

    init() {
        widget = Make.box(GTK_ORIENTATION_VERTICAL, spacing: 0, [])
        let cancel = Make.button("Cancel") { [unowned self] in self.cancel() }.tooltip("Escape")
        let use = Make.button("Use Photo") { [unowned self] in self.use() }.tooltip("Return")
        let presets = [("Square", 1), ("4:3", 2), ("Full", 3)].map { name, key in
            Make.button(name) { [unowned self] in preset(key) }.tooltip("\(key)")
        }
        Make.append(widget, header(title, leading: [cancel], trailing: presets + [use]))
        area = Make.drawing { [unowned self] cairo, width, height in draw(cairo, width, height) }.expand()
        area.onDrag { [unowned self] phase, x, y in drag(phase, x, y) }
        Make.append(widget, Make.overlay(picture, [area]).style("crop-area"))
    }

    func open(path: String, afterShot: Bool) {
        self.path = path
        self.afterShot = afterShot
        let item = MediaLibrary.item(at: path, kind: .photo)
        imageSize = Size(width: item?.width ?? 1, height: item?.height ?? 1)
        Make.setPicture(picture, file: path)
        Make.setText(title, "Move and Scale — \(URL(fileURLWithPath: path).lastPathComponent) \(imageSize.width)x\(imageSize.height)")
        preset(1)
        log("crop-open", "path=\(path) size=\(imageSize.width)x\(imageSize.height) after-shot=\(afterShot)")
    }

    /// 1: the largest centered square; 2: the largest centered 4:3; 3: all of it.
    func preset(_ number: Int) {
        let aspect = Double(imageSize.width) / Double(imageSize.height)
        let wanted: Double? = number == 1 ? 1 : number == 2 ? 4.0 / 3.0 : nil
        if let wanted {
            let width = min(1, wanted / aspect), height = min(1, aspect / wanted)
            rect = NormalizedRect(x: (1 - width) / 2, y: (1 - height) / 2, width: width, height: height)
        } else {
            rect = NormalizedRect(x: 0, y: 0, width: 1, height: 1)
        }
        area.redraw()
    }

    /// Where the photo lies in the area (the picture is fitted, aspect kept, centered).
    private func imageFrame() -> (x: Double, y: Double, width: Double, height: Double) {
        let (width, height) = area.allocatedSize
        let scale = min(Double(width) / Double(imageSize.width), Double(height) / Double(imageSize.height))
        let shown = (Double(imageSize.width) * scale, Double(imageSize.height) * scale)
        return ((Double(width) - shown.0) / 2, (Double(height) - shown.1) / 2, shown.0, shown.1)
    }

    private func draw(_ cairo: OpaquePointer, _ width: Int, _ height: Int) {
        let frame = imageFrame()
        let x = frame.x + rect.x * frame.width, y = frame.y + rect.y * frame.height
        let w = rect.width * frame.width, h = rect.height * frame.height
        // Shade what is cropped away, outline what stays.
        cairo_set_source_rgba(cairo, 0, 0, 0, 0.55)
        cairo_rectangle(cairo, frame.x, frame.y, frame.width, frame.height)
        cairo_rectangle(cairo, x, y, w, h)
        cairo_set_fill_rule(cairo, CAIRO_FILL_RULE_EVEN_ODD)
        cairo_fill(cairo)
        cairo_set_source_rgb(cairo, 1, 1, 1)
        cairo_set_line_width(cairo, 2)
        cairo_rectangle(cairo, x, y, w, h)
        cairo_stroke(cairo)
    }

    private func drag(_ phase: DragPhase, _ x: Double, _ y: Double) {
        let frame = imageFrame()
        func normalized(_ px: Double, _ py: Double) -> (Double, Double) {
            (min(1, max(0, (px - frame.x) / frame.width)), min(1, max(0, (py - frame.y) / frame.height)))
        }
        switch phase {
        case .began: dragStart = (x, y)
        case .moved, .ended:
            guard let start = dragStart else { return }
            let a = normalized(start.0, start.1), b = normalized(start.0 + x, start.1 + y)
            let candidate = NormalizedRect(x: min(a.0, b.0), y: min(a.1, b.1), width: abs(a.0 - b.0), height: abs(a.1 - b.1))
            if candidate.width * Double(imageSize.width) >= 16, candidate.height * Double(imageSize.height) >= 16 { rect = candidate }
            if phase == .ended { dragStart = nil }
            area.redraw()
        }
    }

    /// Use: the editing step's original and edited image, through the controller's `editImage` (the
    /// original is never modified; the edited image is a new file). After a shot, the shot goes to
    /// the album first and is the original; the edited image goes to the album too.
    func use() {
        guard let app else { return }
        let (path, afterShot, rect, library, controller) = (path, afterShot, rect, app.library, app.controller)
        log("crop-use", String(format: "rect=%.4f,%.4f,%.4f,%.4f", rect.x, rect.y, rect.width, rect.height))
        GTK.perform({ () async throws(CaptureError) -> ImageEditResult in
            var source = path
            if afterShot {
                guard let bytes = FileManager.default.contents(atPath: path) else { throw .notAMediaFile(path: path, reason: "the shot is gone") }
                source = try await library.save(photoData: [UInt8](bytes)).path
                try? FileManager.default.removeItem(atPath: path)
            }
            let request = ImageEditRequest(source: source, crop: rect, location: "\(library.picturesFolder)/IMG_%04d.jpg")
            return try await controller.editImage(request)
        }) { [weak self] result in
            switch result {
            case .success(let edit):
                let (original, edited) = (edit.original, edit.edited)
                log(
                    "crop-saved",
                    "original=\(original.path) original-size=\(original.width ?? 0)x\(original.height ?? 0) "
                        + "edited=\(edited.path) edited-size=\(edited.width ?? 0)x\(edited.height ?? 0) rect=\(edit.cropX),\(edit.cropY),\(edit.cropWidth),\(edit.cropHeight)"
                )
                app.message("Saved the original and a \(edited.width ?? 0)x\(edited.height ?? 0) crop")
                app.viewer.open(edited, picked: false)
                app.show(.viewer)
            case .failure(let error):
                self?.fail(error)
            }
        }
    }

    private func fail(_ error: CaptureError) {
        app?.message("Crop failed: \(error.description)")
    }

    /// Cancel: nothing saved; a shot waiting for its crop is deleted.
    func cancel() {
        if afterShot { try? FileManager.default.removeItem(atPath: path) }
        log("crop-cancelled", "path=\(path) deleted=\(afterShot)")
        app?.show(afterShot ? .camera : .viewer)
        if !afterShot, let app, let item = app.viewer.item { app.viewer.open(item, picked: false) }
    }
}

// MARK: Trim (recipe 9-3) and thumbnails (recipe 9-8)

/// The trim editor: the video with a start and an end slider (the preview seeks to the handle moved),
/// Trim writes the range as a new file in the album; Thumbnail saves the frame at the start handle.
@MainActor
final class TrimPage {
    weak var app: CameraApp?
    let widget: Widget
    private let title = Make.label("Trim")
    private let holder = Make.box(GTK_ORIENTATION_VERTICAL, spacing: 0, []).expand()
    private let range = Make.label("", style: "chip")
    private var startSlider: Widget!
    private var endSlider: Widget!
    private var stream: UnsafeMutablePointer<GtkMediaStream>?
    private(set) var path = ""
    private var duration = 0.0
    private var adjusting = false

    init() {
        widget = Make.box(GTK_ORIENTATION_VERTICAL, spacing: 0, [])
        let cancel = Make.button("Cancel") { [unowned self] in self.cancel() }.tooltip("Escape")
        let thumbnail = Make.button("Thumbnail") { [unowned self] in self.thumbnail() }.tooltip("h: the frame at the start handle")
        let save = Make.button("Trim") { [unowned self] in self.trim() }.tooltip("Return")
        Make.append(widget, header(title, leading: [cancel], trailing: [range, thumbnail, save]))
        Make.append(widget, holder)
        startSlider = Make.slider(0, 1, step: 0.1) { [unowned self] in changed(start: true) }
        endSlider = Make.slider(0, 1, step: 0.1) { [unowned self] in changed(start: false) }
        let sliders = Make.box(
            GTK_ORIENTATION_VERTICAL, spacing: 4,
            [
                Make.box(GTK_ORIENTATION_HORIZONTAL, spacing: 8, [Make.label("Start  [ ]"), startSlider]),
                Make.box(GTK_ORIENTATION_HORIZONTAL, spacing: 8, [Make.label("End    - ="), endSlider]),
            ]
        ).margin(8)
        Make.append(widget, sliders)
    }

    func open(path: String) {
        self.path = path
        duration = MediaLibrary.item(at: path, kind: .video)?.duration ?? 0
        Make.setText(title, "Trim — \(URL(fileURLWithPath: path).lastPathComponent)")
        adjusting = true
        Make.setValue(startSlider, 0, range: 0...max(0.1, duration))
        Make.setValue(endSlider, duration, range: 0...max(0.1, duration))
        adjusting = false
        stream = showMedia(path, kind: .video, in: holder, autoplay: false)
        showRange()
        log("trim-open", String(format: "path=%@ duration=%.3f", path, duration))
    }

    var start: Double { Make.value(startSlider) }
    var end: Double { Make.value(endSlider) }

    /// Keys: moves the start (or the end) handle by `delta` seconds.
    func nudge(start moveStart: Bool, by delta: Double) {
        let slider = moveStart ? startSlider! : endSlider!
        Make.setValue(slider, min(duration, max(0, Make.value(slider) + delta)))
    }

    private func changed(start moved: Bool) {
        guard !adjusting else { return }
        // The handles do not cross.
        adjusting = true
        if moved, start > end { Make.setValue(endSlider, start) }
        if !moved, end < start { Make.setValue(startSlider, end) }
        adjusting = false
        if let stream { gtk_media_stream_seek(stream, Int((moved ? start : end) * 1_000_000)) }
        showRange()
    }

    private func showRange() { Make.setText(range, String(format: "%.2f – %.2f s (%.2f s)", start, end, end - start)) }

    func togglePlaying() {
        guard let stream else { return }
        gtk_media_stream_set_playing(stream, gtk_media_stream_get_playing(stream) == 0 ? 1 : 0)
    }

    func trim() {
        guard let app, end - start >= 0.1 else {
            app?.message("Choose a range of at least 0.1 s")
            return
        }
        let name = "TRIM_\(Int(Date().timeIntervalSince1970 * 1000)).mp4"
        let request = VideoTrimRequest(source: .file(path), from: start, to: end, location: name, mode: .exact, saveToLibrary: true)
        log("trim", String(format: "from=%.3f to=%.3f", start, end))
        app.perform(.trim(request)) { [unowned self] result in
            guard case .trimmed(let trimmed, let saved) = result else { return }
            log(
                "trimmed",
                String(
                    format: "path=%@ library=%@ from=%.3f to=%.3f duration=%.3f", trimmed.location, saved ?? "-", trimmed.requestedStart, trimmed.requestedEnd,
                    trimmed.duration))
            app.message(String(format: "Saved a %.1f s clip", trimmed.duration))
            close()
        }
    }

    /// Recipe 9-8: the frame at the start handle, saved to the album.
    func thumbnail() {
        guard let app else { return }
        let time = start
        let location = "THUMB_\(Int(Date().timeIntervalSince1970 * 1000)).jpg"
        app.perform(.thumbnail(VideoThumbnailRequest(source: .file(path), time: .seconds(time), location: location))) { result in
            guard case .thumbnail(_, let written, let image) = result else { return }
            let library = app.library
            GTK.perform({ () async throws(CaptureError) in try await library.save(photoAt: written) }) { saved in
                switch saved {
                case .success(let item):
                    log("thumbnail", String(format: "path=%@ time=%.3f actual=%.3f size=%dx%d", item.path, time, image.actualTime, image.width, image.height))
                    app.message(String(format: "Saved the frame at %.2f s", image.actualTime))
                case .failure(let error): app.message("Save failed: \(error.description)")
                }
            }
        }
    }

    /// Cancel: nothing written.
    func cancel() {
        log("trim-cancelled", "path=\(path)")
        close()
    }

    private func close() {
        clear(holder)
        stream = nil
        app?.showAlbum(picking: false)
    }
}
