import CGtk
import Capture
// The desktop camera app (seed 002 made real, with recipes 9-1, 9-3, 9-4, 9-5, 9-7 and 9-8): a GTK 4
// window with the live preview (CaptureGTK's CapturePreviewView) under overlay controls, a shutter,
// photo/video modes switched on the running session, recording with its elapsed time, flash, torch
// and camera toggles, the album (the user's Pictures and Videos) as a grid, a photo viewer and a
// video player, picking an item with Cancel, the crop step after a shot, a trim editor and a
// thumbnail at a chosen time. Every action has a key (F1 lists them); every session action goes
// through CaptureControl's SessionController, as the web app and MQTT do.
//
// Usage: camera-app [--input SPEC] [--output-dir DIR] [--microphone auto|none|SPEC] [--edit]
//                   [--log-frames FILE] [--size WIDTHxHEIGHT]
import CaptureGTK
import Foundation

/// The command line.
struct Options {
    var input = "default"
    var outputFolder = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/camera-app").path
    var microphone = "auto"
    var editsAfterShot = false
    var frameLog: String?
    var width = 960, height = 600

    static let usage = """
        usage: camera-app [--input SPEC] [--output-dir DIR] [--microphone auto|none|SPEC] [--edit]
                          [--log-frames FILE] [--size WIDTHxHEIGHT]
          --input SPEC       the camera: default (the first camera; "Camera Unavailable" without one),
                             test-pattern, /dev/videoN ... (default: default)
          --output-dir DIR   the app's working folder: shots before the crop step, album thumbnails,
                             trimmed copies (default: ~/.cache/camera-app). The album is the user's
                             Pictures and Videos (CAPTURE_PICTURES_DIR, CAPTURE_VIDEOS_DIR override them)
          --microphone M     video mode's microphone: auto (the first one, else video without sound),
                             none, or a device (video mode is refused, staying in photo mode, when it
                             is missing)
          --edit             the crop step after each shot is on from the start (key e)
          --log-frames FILE  one line per preview frame as it arrives: sequence, pts, monotonic time
          --size WxH         the window's size (default 960x600)
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ name: String) -> String {
            guard let next = rest.popFirst() else { fail("\(name) needs a value") }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--input", "-i": options.input = value(argument)
            case "--output-dir", "-o": options.outputFolder = value(argument)
            case "--microphone": options.microphone = value(argument)
            case "--edit": options.editsAfterShot = true
            case "--log-frames": options.frameLog = value(argument)
            case "--size":
                let parts = value(argument).split(separator: "x").compactMap { Int($0) }
                guard parts.count == 2 else { fail("--size takes WIDTHxHEIGHT") }
                (options.width, options.height) = (parts[0], parts[1])
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown argument \(argument)")
            }
        }
        return options
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("camera-app: \(message)\n\(usage)\n".utf8))
        exit(64)
    }
}

StandardOutput.useLineBuffering()
let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
MainActor.assumeIsolated {
    gtk_init()
    let app = CameraApp(options: options)
    app.start()
    GTK.run { app.window.isClosed }
    app.shutDown()
}
