import CGtk
import Capture
import CaptureControl
import CaptureGTK
import Foundation

/// A page's header: a row of buttons and a title.
@MainActor
func header(_ title: Widget, leading: [Widget], trailing: [Widget]) -> Widget {
    Make.box(GTK_ORIENTATION_HORIZONTAL, spacing: 8, leading + [title.expand(true, false)] + trailing).style("bar")
}

/// Shows a video (GTK's GStreamer media backend, with its controls) or a photo inside `holder`, replacing what
/// it showed; returns the video's media stream.
@MainActor
@discardableResult
func showMedia(_ path: String, kind: MediaLibrary.MediaKind, in holder: Widget, autoplay: Bool) -> UnsafeMutablePointer<GtkMediaStream>? {
    clear(holder)
    switch kind {
    case .photo:
        Make.append(holder, Make.picture(file: path).expand())
        return nil
    case .video:
        let video = Make.video(file: path, autoplay: autoplay)
        Make.append(holder, video.widget)
        return video.stream
    }
}

/// Removes a box's children (a video's widget going stops it).
@MainActor
func clear(_ holder: Widget) {
    while let child = gtk_widget_get_first_child(holder.pointer) { gtk_box_remove(holder.cast(), child) }
}

// MARK: Album

/// The album: the user's photos and videos, newest first, as a grid of thumbnails. In picking mode
/// (the picker's photo-library source) it has a Cancel button and a choice opens the item.
@MainActor
final class AlbumPage {
    weak var app: CameraApp?
    let widget: Widget
    private let title = Make.label("Album")
    private let note = Make.label("", style: "chip")
    private let scroller: Widget
    private var backButton: Widget!
    private(set) var items: [MediaLibrary.Item] = []
    private var cells: [Widget] = []
    private(set) var selected = 0
    private(set) var picking = false

    init() {
        scroller = Make.scrolled(Widget(gtk_flow_box_new()!))
        widget = Make.box(GTK_ORIENTATION_VERTICAL, spacing: 0, [])
        backButton = Make.button("Back") { [unowned self] in close() }
        Make.append(widget, header(title, leading: [backButton], trailing: [note]))
        Make.append(widget, scroller)
    }

    func message(_ text: String) { Make.setText(note, text) }

    /// Reads the library again and rebuilds the grid.
    func reload(picking: Bool) {
        guard let app else { return }
        self.picking = picking
        Make.setText(title, picking ? "Choose a Photo or Video" : "Album")
        Make.setButtonText(backButton, picking ? "Cancel" : "Back")
        Make.setText(note, "")
        items = app.library.items()
        let grid = Widget(gtk_flow_box_new()!)
        gtk_flow_box_set_selection_mode(grid.opaque, GTK_SELECTION_NONE)
        gtk_flow_box_set_max_children_per_line(grid.opaque, 8)
        gtk_flow_box_set_min_children_per_line(grid.opaque, 2)
        grid.align(GTK_ALIGN_FILL, GTK_ALIGN_START).margin(8)
        cells = items.enumerated().map { index, item in cell(item, index: index) }
        for cell in cells { gtk_flow_box_insert(grid.opaque, cell.pointer, -1) }
        gtk_scrolled_window_set_child(scroller.opaque, grid.pointer)
        if items.isEmpty { Make.setText(note, "No photos or videos yet") }
        selected = 0
        select(0)
        log("album", "items=\(items.count) photos=\(items.filter { $0.kind == .photo }.count) videos=\(items.filter { $0.kind == .video }.count)")
    }

    private func cell(_ item: MediaLibrary.Item, index: Int) -> Widget {
        let name = URL(fileURLWithPath: item.path).lastPathComponent
        let picture = Make.thumbnail(size: 192)
        let caption = item.kind == .video ? String(format: "▶ %@ %.1f s", name, item.duration ?? 0) : name
        let content = Make.box(GTK_ORIENTATION_VERTICAL, spacing: 2, [picture, Make.label(caption, style: "chip")])
        let button = Widget(gtk_button_new()!).focusable(false).style("thumb")
        gtk_button_set_child(button.cast(), content.pointer)
        button.on("clicked") { [unowned self] in open(index) }
        switch item.kind {
        case .photo: Make.setThumbnail(picture, file: item.path)
        case .video: thumbnail(of: item, into: picture)
        }
        return button
    }

    /// A video's poster frame, made once into the working folder's thumbnails (through the controller).
    private func thumbnail(of item: MediaLibrary.Item, into picture: Widget) {
        guard let app else { return }
        let folder = "\(app.options.outputFolder)/thumbnails"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let location = "\(folder)/\(URL(fileURLWithPath: item.path).lastPathComponent).jpg"
        if let made = try? FileManager.default.attributesOfItem(atPath: location)[.modificationDate] as? Date, made >= item.date {
            return Make.setThumbnail(picture, file: location)
        }
        let request = VideoThumbnailRequest(source: .file(item.path), time: .fraction(0.1), maximumSize: Size(width: 384, height: 216), location: location)
        app.perform(.thumbnail(request), busy: false) { _ in Make.setThumbnail(picture, file: location) }
    }

    func select(_ index: Int) {
        guard !cells.isEmpty else { return }
        cells[selected].unstyle("selected")
        selected = max(0, min(cells.count - 1, index))
        cells[selected].style("selected")
    }

    /// Arrow keys: one cell, or a row (the grid's cells per row) up and down.
    func move(_ delta: Int, rows: Bool) {
        let perRow = max(1, (widget.allocatedSize.width - 8) / 210)
        select(selected + (rows ? delta * perRow : delta))
    }

    func open(_ index: Int? = nil) {
        guard let app, let index = index ?? (items.isEmpty ? nil : selected), items.indices.contains(index) else { return }
        let (item, picking, controller) = (items[index], picking, app.controller)
        // The picker's choice, described through the controller (as the web app's gallery does).
        GTK.perform({ () async throws(CaptureError) in try await controller.pickMedia(item.path) }) { result in
            switch result {
            case .success(let entry):
                log(picking ? "picked" : "open", "path=\(entry.path) kind=\(entry.kind.rawValue)")
                app.viewer.open(entry, picked: picking)
                app.show(.viewer)
            case .failure(let error): app.message(error.description)
            }
        }
    }

    /// Back to the camera; in picking mode, the picker's Cancel: nothing chosen, nothing written.
    func close() {
        if picking { log("pick-cancelled") }
        app?.show(.camera)
    }
}

// MARK: Viewer

/// One item: a photo, or a video playing (GTK's media backend and controls), with its editing steps.
@MainActor
final class ViewerPage {
    weak var app: CameraApp?
    let widget: Widget
    private let title = Make.label("")
    private let holder = Make.box(GTK_ORIENTATION_VERTICAL, spacing: 0, []).expand()
    private var cropButton: Widget!
    private var trimButton: Widget!
    private(set) var item: MediaEntry?

    init() {
        widget = Make.box(GTK_ORIENTATION_VERTICAL, spacing: 0, [])
        let back = Make.button("Back") { [unowned self] in close() }
        cropButton = Make.button("Crop…") { [unowned self] in editItem() }.tooltip("Crop (k)")
        trimButton = Make.button("Trim…") { [unowned self] in editItem() }.tooltip("Trim (k)")
        Make.append(widget, header(title, leading: [back], trailing: [cropButton, trimButton]))
        Make.append(widget, holder)
    }

    func open(_ item: MediaEntry, picked: Bool) {
        self.item = item
        let name = URL(fileURLWithPath: item.path).lastPathComponent
        let size = item.width.map { "\($0)x\(item.height ?? 0)" } ?? ""
        Make.setText(title, "\(picked ? "Chosen: " : "")\(name)  \(size)")
        cropButton.isVisible = item.kind == .photo
        trimButton.isVisible = item.kind == .video
        showMedia(item.path, kind: item.kind, in: holder, autoplay: true)
    }

    /// The crop step for a photo, the trim editor for a video.
    func editItem() {
        guard let app, let item else { return }
        stop()
        switch item.kind {
        case .photo:
            app.crop.open(path: item.path, afterShot: false)
            app.show(.crop)
        case .video:
            app.trim.open(path: item.path)
            app.show(.trim)
        }
    }

    /// Stops the video (its widget goes).
    func stop() { clear(holder) }

    func close() {
        stop()
        app?.showAlbum(picking: false)
    }
}
