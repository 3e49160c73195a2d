// Recipe 9-5 in a GTK 4 window: the live preview inside the application's own window, as
// AVCaptureVideoPreviewLayer sits in a view. CaptureGTK's CapturePreviewView is the widget; it tells the
// preview its size, and the preview sends it frames at that size (gravity applied), which GTK shows
// without a pixel copy. `capture bench --only preview` runs this program against gst-launch-1.0's
// gtksink and ximagesink.
//
// Usage: gtk-preview [--input INPUT] [--preset PRESET] [--size WxH] [--gravity G] [--mirrored] [--seconds S]
// Says "showing WxH" once a frame at the window's size is on screen, and how many frames were shown
// when it ends (after S seconds, or when the window is closed).
import CGtk
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
    seconds: nil as Double?
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
let view = CapturePreviewView(preview: preview)
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
view.onShown { arrival in
    handOvers.append(GTK.monotonicSeconds() - arrival.arrival)
    guard let view = preview.viewSize, arrival.width == view.width, arrival.height == view.height,
        !said.exchange(true, ordering: .relaxed)
    else { return }
    FileHandle.standardOutput.write(Data("showing \(view)\n".utf8))
}
let window = gtk_window_new()!
let gtkWindow = UnsafeMutableRawPointer(window).assumingMemoryBound(to: GtkWindow.self)
gtk_window_set_title(gtkWindow, "Camera preview")
gtk_window_set_default_size(gtkWindow, Int32(options.size.width), Int32(options.size.height))
gtk_window_set_child(gtkWindow, view.widget.pointer)
gtk_window_present(gtkWindow)

// viewWillAppear: start on a task of its own (GTK's loop holds the main thread); the loop runs until
// the window is closed, the time is up, or the session fails to start.
let finished = Atomic<Bool>(false)
// The session's events on stderr, as they happen (a runtime error of the preview among them).
let events = session.events()
Task.detached {
    for await event in events { FileHandle.standardError.write(Data("event: \(event)\n".utf8)) }
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
print("shown \(view.shownFrameCount) frames, \(view.droppedFrameCount) replaced before GTK could show them")
gtk_window_destroy(gtkWindow)
