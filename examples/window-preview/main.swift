// The preview inside a window the application owns, as AVCaptureVideoPreviewLayer sits in a view:
// any toolkit that can give an X11 window id (Xlib here; GTK, Qt, SDL the same way) hands it to the
// preview, which draws into it, fills it as `videoGravity` says and follows its size.
//
// Usage: window-preview [--input INPUT] [--preset PRESET] [--size WxH] [--gravity resize-aspect|resize-aspect-fill|resize]
//                       [--mirrored] [--seconds S]
// With --seconds it runs that long; without, it reads commands on stdin, one per line, and answers
// each on stdout once it took effect:
//   resize W H         resizes the window (the preview follows)
//   gravity G          changes the gravity on the running session
//   point X Y          the camera's normalized point shown at view point (X, Y) (tap-to-focus)
//   quit               stops the session and closes the window
import CX11
import Capture
import Foundation

/// Prints a line at once (unbuffered), so a program reading the answers gets each as it is said.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

var options = (
    input: "default", preset: SessionPreset.high, size: Size(width: 640, height: 480), gravity: VideoGravity.resizeAspect, mirrored: false,
    seconds: nil as Double?
)
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--input": options.input = arguments.popFirst() ?? options.input
    case "--preset":
        guard let preset = arguments.popFirst().flatMap(SessionPreset.init(rawValue:)) else {
            say("--preset takes a session preset (hd1280x720 ...)")
            exit(64)
        }
        options.preset = preset
    case "--size":
        guard let size = arguments.popFirst().flatMap(Size.init(parsing:)) else { say("--size takes WxH"); exit(64) }
        options.size = size
    case "--gravity":
        guard let gravity = arguments.popFirst().flatMap(VideoGravity.init(rawValue:)) else {
            say("--gravity takes \(VideoGravity.allCases.map(\.rawValue).joined(separator: ", "))")
            exit(64)
        }
        options.gravity = gravity
    case "--mirrored": options.mirrored = true
    case "--seconds": options.seconds = arguments.popFirst().flatMap(Double.init)
    default:
        say("unknown option \(argument)")
        exit(64)
    }
}

// The application's window: a plain X11 window, mapped and waited for.
guard let display = XOpenDisplay(nil) else {
    say("No X display (set DISPLAY)")
    exit(69)
}
let screen = XDefaultScreen(display)
let window = XCreateSimpleWindow(
    display, XRootWindow(display, screen), 0, 0, UInt32(options.size.width), UInt32(options.size.height), 0,
    XWhitePixel(display, screen), XWhitePixel(display, screen))
XStoreName(display, window, "window-preview")
XSelectInput(display, window, StructureNotifyMask)
XMapWindow(display, window)
var event = XEvent()
repeat { XNextEvent(display, &event) } while event.type != MapNotify
say("window 0x\(String(window, radix: 16)) \(options.size)")

let session = CaptureSession()
let preview = CaptureVideoPreviewOutput()
do {
    let device = try CaptureDevice.resolve(options.input)
    try session.addInput(try CaptureDeviceInput(device: device))
    try session.setSessionPreset(options.preset)
    try preview.setWindowHandle(UInt(window))
    preview.videoGravity = options.gravity
    preview.connection.isMirrored = options.mirrored
    try session.addOutput(preview)
    try await session.startRunning()
} catch {
    say("Could not start the preview: \(error)")
    exit(1)
}

/// Waits (bounded) until `condition` holds: the preview's state changes on its own threads.
func waitUntil(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<250 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

/// What the preview shows now, where, for the caller to check against the window's pixels.
func report(_ what: String) {
    guard let geometry = preview.geometry else {
        say("\(what): no geometry")
        return
    }
    let rect = geometry.videoRect
    say("\(what) view \(geometry.viewSize) gravity \(geometry.gravity.rawValue) video \(Int(rect.x)) \(Int(rect.y)) \(Int(rect.width)) \(Int(rect.height))")
}

guard await waitUntil({ (try? preview.snapshot()) != nil }) else {
    say("the preview showed no frame")
    exit(1)
}
report("showing")

if let seconds = options.seconds {
    try await Task.sleep(for: .seconds(seconds))
} else {
    while let line = readLine() {
        let words = line.split(separator: " ").map(String.init)
        switch words.first {
        case "resize" where words.count == 3:
            guard let width = Int(words[1]), let height = Int(words[2]), width > 0, height > 0 else { say("resize W H"); continue }
            XResizeWindow(display, window, UInt32(width), UInt32(height))
            XFlush(display)
            let target = Size(width: width, height: height)
            _ = await waitUntil { preview.viewSize == target }
            report("resized")
        case "gravity" where words.count == 2:
            guard let gravity = VideoGravity(rawValue: words[1]) else { say("unknown gravity"); continue }
            preview.videoGravity = gravity
            report("gravity")
        case "point" where words.count == 3:
            guard let x = Double(words[1]), let y = Double(words[2]) else { say("point X Y"); continue }
            let point = preview.captureDevicePointConverted(fromLayerPoint: ViewPoint(x: x, y: y))
            say("point \(point.x) \(point.y)")
        case "destroy":
            // The application destroys its window while the session runs (it should stop it first).
            XDestroyWindow(display, window)
            XFlush(display)
            say("destroyed")
        case "quit": break
        default:
            say("unknown command: \(line)")
            continue
        }
        if words.first == "quit" { break }
    }
}
await session.stopRunning()
XDestroyWindow(display, window)
XCloseDisplay(display)
say("stopped")
