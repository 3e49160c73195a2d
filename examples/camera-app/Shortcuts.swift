import CaptureGTK
import Foundation

/// Every action's key, by page. The help overlay (F1) and docs/desktop.md list the same table.
@MainActor
enum Shortcuts {
    /// A key (GTK's trigger syntax), what it does, and where.
    struct Binding {
        var trigger: String
        var key: String
        var help: String
        var pages: Set<Page>
        var action: @MainActor (CameraApp) -> Void
    }

    static let bindings: [Binding] = [
        Binding(trigger: "space", key: "Space", help: "shutter / start-stop recording", pages: [.camera]) { $0.shutter() },
        Binding(trigger: "v", key: "v", help: "photo / video mode", pages: [.camera]) { $0.switchMode() },
        Binding(trigger: "r", key: "r", help: "start / stop recording", pages: [.camera]) { $0.toggleRecording() },
        Binding(trigger: "f", key: "f", help: "flash auto / on / off", pages: [.camera]) { $0.toggleFlash() },
        Binding(trigger: "t", key: "t", help: "torch on / off", pages: [.camera]) { $0.toggleTorch() },
        Binding(trigger: "c", key: "c", help: "switch camera", pages: [.camera]) { $0.switchCamera() },
        Binding(trigger: "e", key: "e", help: "crop step after each shot on / off", pages: [.camera]) { $0.toggleEditing() },
        Binding(trigger: "g", key: "g", help: "preview gravity: aspect / fill / stretch", pages: [.camera]) { $0.cycleGravity() },
        Binding(trigger: "x", key: "x", help: "trim the last recording", pages: [.camera]) { $0.editLastVideo() },
        Binding(trigger: "a", key: "a", help: "album", pages: [.camera]) { $0.showAlbum(picking: false) },
        Binding(trigger: "p", key: "p", help: "choose from the album (Escape cancels)", pages: [.camera]) { $0.showAlbum(picking: true) },
        Binding(trigger: "Left", key: "← → ↑ ↓", help: "album: select", pages: [.album]) { $0.album.move(-1, rows: false) },
        Binding(trigger: "Right", key: "", help: "", pages: [.album]) { $0.album.move(1, rows: false) },
        Binding(trigger: "Up", key: "", help: "", pages: [.album]) { $0.album.move(-1, rows: true) },
        Binding(trigger: "Down", key: "", help: "", pages: [.album]) { $0.album.move(1, rows: true) },
        Binding(trigger: "Return", key: "Return", help: "album: open / crop: use / trim: trim", pages: [.album, .crop, .trim]) { app in
            switch app.page {
            case .album: app.album.open()
            case .crop: app.crop.use()
            default: app.trim.trim()
            }
        },
        Binding(trigger: "k", key: "k", help: "viewer: crop the photo / trim the video", pages: [.viewer]) { $0.viewer.editItem() },
        Binding(trigger: "1", key: "1 2 3", help: "crop: square / 4:3 / full", pages: [.crop]) { $0.crop.preset(1) },
        Binding(trigger: "2", key: "", help: "", pages: [.crop]) { $0.crop.preset(2) },
        Binding(trigger: "3", key: "", help: "", pages: [.crop]) { $0.crop.preset(3) },
        Binding(trigger: "bracketleft", key: "[ ]", help: "trim: start -/+ 0.5 s", pages: [.trim]) { $0.trim.nudge(start: true, by: -0.5) },
        Binding(trigger: "bracketright", key: "", help: "", pages: [.trim]) { $0.trim.nudge(start: true, by: 0.5) },
        Binding(trigger: "minus", key: "- =", help: "trim: end -/+ 0.5 s", pages: [.trim]) { $0.trim.nudge(start: false, by: -0.5) },
        Binding(trigger: "equal", key: "", help: "", pages: [.trim]) { $0.trim.nudge(start: false, by: 0.5) },
        Binding(trigger: "h", key: "h", help: "trim: save the frame at the start as a photo", pages: [.trim]) { $0.trim.thumbnail() },
        Binding(trigger: "space", key: "Space", help: "trim: play / pause", pages: [.trim]) { $0.trim.togglePlaying() },
        Binding(trigger: "Escape", key: "Escape", help: "back / cancel", pages: [.album, .viewer, .crop, .trim]) { app in
            switch app.page {
            case .album: app.album.close()
            case .viewer: app.viewer.close()
            case .crop: app.crop.cancel()
            default: app.trim.cancel()
            }
        },
        Binding(trigger: "F1", key: "F1", help: "this help", pages: [.camera, .album, .viewer, .crop, .trim]) { $0.toggleHelp() },
        Binding(trigger: "<Control>q", key: "Ctrl+Q", help: "quit", pages: [.camera, .album, .viewer, .crop, .trim]) { $0.window.close() },
    ]

    /// The help overlay's text.
    static let helpText: String = {
        let rows = bindings.filter { !$0.key.isEmpty }.map { $0.key.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.help }
        return "Keyboard shortcuts\n\n" + rows.joined(separator: "\n")
    }()

    /// One shortcut per key, routed by the page shown (a key no binding of the page takes goes on).
    static func install(in app: CameraApp) {
        var triggers: [String] = []
        for binding in bindings where !triggers.contains(binding.trigger) { triggers.append(binding.trigger) }
        for trigger in triggers {
            app.window.shortcut(trigger) { [unowned app] in
                guard let binding = bindings.first(where: { $0.trigger == trigger && $0.pages.contains(app.page) }) else { return false }
                log("key", "key=\(trigger) page=\(app.page.rawValue)")
                binding.action(app)
                return true
            }
        }
    }
}
