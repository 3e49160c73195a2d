// Recipe 9-5 in a GTK 4 window: the live preview inside the application's own window, as
// AVCaptureVideoPreviewLayer sits in a view. CaptureGTK's CapturePreviewView is the widget; it tells the
// preview its size, and the preview sends it frames at that size (gravity applied), which GTK shows
// as textures over the frames' own buffers (GL, Vulkan) or, under its cairo renderer on X11, from images
// the X server shares (one copy). `capture bench --only preview` runs this program against gst-launch-1.0's
// gtksink and ximagesink.
//
// With --wayland-surface (under Wayland: GDK_BACKEND=wayland), the preview draws into the window's own
// wl_surface instead (waylandsink makes a subsurface of it), in the rectangle of the window's content
// area: the app tells the preview that rectangle in surface coordinates, its client-side decorations'
// shadow margins included, whenever GTK lays the window out again. Commands on stdin, one per line:
// `resize W H` (the window's size), `gravity G`, `remove` / `add` (the preview leaves the running
// session / joins it again), `quit`.
//
// Usage: gtk-preview [--input INPUT] [--preset PRESET] [--size WxH] [--gravity G] [--mirrored] [--seconds S]
//                    [--wayland-surface]
// Says "showing WxH (PATH)" once a frame at the window's size is on screen, PATH saying how frames reach
// GTK (texture, shared-image) (with --wayland-surface: "showing
// WxH+X+Y" once the sink drew at that area of the surface), and how many frames were shown when it ends
// (after S seconds, or when the window is closed).
import CGtk
import CGtkWayland
import Capture
import CaptureGTK
import Foundation
import Synchronization

/// A usage error: said on stderr, exit 64.
func usage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("gtk-preview: \(message)\n".utf8))
    exit(64)
}

var options = (
    input: "default", preset: SessionPreset.high, size: Size(width: 1280, height: 720), gravity: VideoGravity.resizeAspect, mirrored: false,
    seconds: nil as Double?, waylandSurface: false
)
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--input": options.input = arguments.popFirst() ?? options.input
    case "--preset":
        guard let preset = arguments.popFirst().flatMap(SessionPreset.init(rawValue:)) else { usage("--preset takes a session preset (hd1280x720 ...)") }
        options.preset = preset
    case "--size":
        guard let size = arguments.popFirst().flatMap(Size.init(parsing:)) else { usage("--size takes WxH") }
        options.size = size
    case "--gravity":
        guard let gravity = arguments.popFirst().flatMap(VideoGravity.init(rawValue:)) else {
            usage("--gravity takes resize-aspect, resize-aspect-fill or resize")
        }
        options.gravity = gravity
    case "--mirrored": options.mirrored = true
    case "--seconds": options.seconds = arguments.popFirst().flatMap(Double.init)
    case "--wayland-surface": options.waylandSurface = true
    default: usage("unknown option \(argument)")
    }
}

guard gtk_init_check() != 0 else {
    print("No display: GTK cannot open a window (set DISPLAY or WAYLAND_DISPLAY)")
    exit(69)
}

// viewDidLoad: the session, its camera, and the preview in the window.
let session = CaptureSession()
let preview = CaptureVideoPreviewOutput(name: "preview")
preview.videoGravity = options.gravity
preview.connection.isMirrored = options.mirrored
// CaptureGTK's view, unless the preview draws into the window's own Wayland surface.
let view = options.waylandSurface ? nil : CapturePreviewView(preview: preview)
if options.waylandSurface
    && g_type_check_instance_is_a(
        UnsafeMutableRawPointer(gdk_display_get_default()).assumingMemoryBound(to: GTypeInstance.self), gdk_wayland_display_get_type()) == 0
{
    print("--wayland-surface needs GTK on Wayland (GDK_BACKEND=wayland, WAYLAND_DISPLAY)")
    exit(69)
}
do {
    let device = try CaptureDevice.resolve(options.input)
    try session.addInput(try CaptureDeviceInput(device: device))
    try session.setSessionPreset(options.preset)
    try session.addOutput(preview)
} catch {
    print("Input Error: \(error)")
    exit(1)
}

// Says once when the first frame at the view's size is on screen (unbuffered: a test reads it).
let said = Atomic<Bool>(false)
// How long each frame waited between its arrival from the session and being on GTK's screen.
nonisolated(unsafe) var handOvers: [Double] = []
view?.onShown { [weak view] arrival in
    handOvers.append(GTK.monotonicSeconds() - arrival.arrival)
    guard let size = preview.viewSize, arrival.width == size.width, arrival.height == size.height,
        !said.exchange(true, ordering: .relaxed)
    else { return }
    // How the frames reach GTK: "texture" or "shared-image" (CapturePreviewView.framePath).
    let path = view?.framePath.map { " (\($0.rawValue))" } ?? ""
    FileHandle.standardOutput.write(Data("showing \(size)\(path)\n".utf8))
}
let window = gtk_window_new()!
let gtkWindow = UnsafeMutableRawPointer(window).assumingMemoryBound(to: GtkWindow.self)
gtk_window_set_title(gtkWindow, "Camera preview")
gtk_window_set_default_size(gtkWindow, Int32(options.size.width), Int32(options.size.height))
// Under the Wayland preview: a black area (the subsurface covers it once frames arrive).
let content =
    view?.widget
    ?? Make.drawing { cairo, _, _ in
        cairo_set_source_rgb(cairo, 0, 0, 0)
        cairo_paint(cairo)
    }
gtk_window_set_child(gtkWindow, content.pointer)
gtk_window_present(gtkWindow)

// viewWillAppear: start on a task of its own (GTK's loop holds the main thread); the loop runs until
// the window is closed, the time is up, or the session fails to start.
let finished = Atomic<Bool>(false)
// The session's events on stderr, as they happen (a runtime error of the preview among them).
let events = session.events()
Task.detached {
    for await event in events { FileHandle.standardError.write(Data("event: \(event)\n".utf8)) }
}
// With --wayland-surface: the content area's rectangle in the window's surface, given to the preview
// before the session starts and again whenever GTK lays the window out anew (a tick of the frame clock
// reads it). The surface's coordinates start at its top-left corner, which under client-side
// decorations is the shadow's corner, not the window's.
@MainActor func surfaceArea() -> SurfaceRect? {
    let native = OpaquePointer(window)
    var offset = (x: 0.0, y: 0.0)
    gtk_native_get_surface_transform(native, &offset.x, &offset.y)
    var origin = graphene_point_t()
    var zero = graphene_point_t(x: 0, y: 0)
    guard gtk_widget_compute_point(content.pointer, window, &zero, &origin) != 0 else { return nil }
    let size = content.allocatedSize
    guard size.width > 0, size.height > 0 else { return nil }
    return SurfaceRect(
        origin: ViewPoint(x: Double(origin.x), y: Double(origin.y)), surfaceOffset: ViewPoint(x: offset.x, y: offset.y),
        size: Size(width: size.width, height: size.height))
}
if options.waylandSurface {
    let told = Locked<SurfaceRect?>(nil)
    content.onTick {
        guard let area = surfaceArea(), area != told.value else { return true }
        if told.value == nil {
            guard let surface = gdk_wayland_surface_get_wl_surface(gtk_native_get_surface(OpaquePointer(window))),
                let display = gdk_wayland_display_get_wl_display(gdk_display_get_default())
            else { return true }
            do {
                try preview.setWaylandSurface(WaylandSurface(display: UnsafeMutableRawPointer(display), surface: UnsafeMutableRawPointer(surface)), area: area)
            } catch {
                print("Preview Error: \(error)")
                exit(1)
            }
        } else {
            do { try preview.setSurfaceArea(area) } catch { print("Preview Error: \(error)") }
        }
        told.value = area
        return true
    }
    // The sink took an area: the subsurface's position applies with the window's next commit (a redraw).
    let said = Locked<SurfaceRect?>(nil)
    preview.surfaceAreaApplied = { area in
        GTK.invoke {
            gtk_widget_queue_draw(content.pointer)
            guard said.value != area else { return }
            said.value = area
            FileHandle.standardOutput.write(Data("showing \(area)\n".utf8))
        }
    }
    // Commands on stdin, read on a thread of their own and carried out on GTK's.
    let commands = Thread {
        while let line = readLine() {
            let words = line.split(separator: " ").map(String.init)
            GTK.invoke {
                switch words.first {
                case "resize" where words.count == 3:
                    gtk_window_set_default_size(gtkWindow, Int32(words[1]) ?? 1, Int32(words[2]) ?? 1)
                case "gravity" where words.count == 2:
                    if let gravity = VideoGravity(rawValue: words[1]) { preview.videoGravity = gravity }
                    FileHandle.standardOutput.write(Data("gravity \(preview.videoGravity.rawValue)\n".utf8))
                case "remove", "add":
                    // The preview leaves the running session, or joins it again: a branch removed from
                    // or added to the live pipeline (the sink asks for the display again as it starts).
                    let adding = words[0] == "add"
                    if adding { said.value = nil }
                    GTK.perform { () throws(CaptureError) in
                        if adding { try session.addOutput(preview) } else { try session.removeOutput(preview) }
                    } then: { result in
                        let answer = (try? result.get()) != nil ? (adding ? "added" : "removed") : "refused \(result)"
                        FileHandle.standardOutput.write(Data("\(answer)\n".utf8))
                    }
                case "quit": gtk_widget_set_visible(window, 0)
                default: FileHandle.standardOutput.write(Data("unknown command \(line)\n".utf8))
                }
            }
        }
    }
    commands.start()
    // The session starts once the preview knows its surface: GTK's loop runs until the window is
    // mapped and laid out (at most 10 s).
    let mapped = ContinuousClock.now + .seconds(10)
    let wake = GTK.every(milliseconds: 50) { true }
    while told.value == nil && ContinuousClock.now < mapped { g_main_context_iteration(nil, 1) }
    GTK.cancel(wake)
    guard told.value != nil else {
        print("The window was not laid out within 10 s")
        exit(1)
    }
}
let started = Task.detached {
    do {
        try await session.startRunning()
        return true
    } catch {
        print("Could not start the camera: \(error)")
        finished.store(true, ordering: .relaxed)
        return false
    }
}
let deadline = options.seconds.map { ContinuousClock.now + .seconds($0) }
// Each iteration blocks until GTK has something to do (an event, a frame handed over); this timer
// makes sure the loop looks at the time at least every 50 ms.
let timer = GTK.every(milliseconds: 50) { true }
while !finished.load(ordering: .relaxed) && gtk_widget_get_visible(window) != 0 {
    if let deadline, ContinuousClock.now >= deadline { break }
    g_main_context_iteration(nil, 1)
}
GTK.cancel(timer)

// viewWillDisappear: stop.
guard await started.value else { exit(1) }
await session.stopRunning()
if let geometry = preview.geometry {
    let rect = geometry.videoRect
    print("view \(geometry.viewSize) gravity \(geometry.gravity.rawValue) video \(Int(rect.x)) \(Int(rect.y)) \(Int(rect.width)) \(Int(rect.height))")
}
let sorted = handOvers.sorted()
if !sorted.isEmpty { print(String(format: "hand-over to GTK: median %.2f ms", sorted[sorted.count / 2] * 1000)) }
if let view {
    let path = view.framePath.map { " (\($0.rawValue))" } ?? ""
    print("shown \(view.shownFrameCount) frames\(path), \(view.droppedFrameCount) replaced before GTK could show them")
}
gtk_window_destroy(gtkWindow)
