// swift-tools-version:6.0
// AVFoundation-style camera capture on GStreamer, for Linux.
// Every C dependency comes through pkg-config; no outside Swift package is used.
import PackageDescription

let package = Package(
    name: "Capture",
    products: [
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "CaptureControl", targets: ["CaptureControl"]),
        .library(name: "PipelineFile", targets: ["PipelineFile"]),
        .library(name: "GStreamer", targets: ["GStreamer"]),
        .library(name: "CaptureMQTT", targets: ["CaptureMQTT"]),
        .library(name: "CaptureServer", targets: ["CaptureServer"]),
        .library(name: "CaptureGTK", targets: ["CaptureGTK"]),
        .executable(name: "capture", targets: ["capture"]),
    ],
    targets: [
        // C headers of GStreamer core, app, video and pbutils (one include tree, one pkg-config file
        // per library is linked through the module map).
        .systemLibrary(
            name: "CGStreamer",
            pkgConfig: "gstreamer-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        .systemLibrary(
            name: "CZbar",
            pkgConfig: "zbar",
            providers: [.apt(["libzbar-dev"])]
        ),
        // zxing-cpp 3 through its C API: Debian 12 ships 1.4, so scripts/build-zxing.sh (run by
        // `make`) builds 3.1.1 from source into /usr/local/zxing-cpp-3.1.1 with capture-zxing.pc.
        .systemLibrary(name: "CZXing", pkgConfig: "capture-zxing"),
        // GStreamer's RTSP server library (the stream output serves rtsp:// with it).
        .systemLibrary(
            name: "CGstRTSPServer",
            pkgConfig: "gstreamer-rtsp-server-1.0",
            providers: [.apt(["libgstrtspserver-1.0-dev"])]
        ),
        // libmosquitto: events and commands over MQTT (`--events mqtt://...`).
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // Xlib: a preview drawn into an application's X11 window follows that window's size.
        .systemLibrary(
            name: "CX11",
            pkgConfig: "x11",
            providers: [.apt(["libx11-dev"])]
        ),
        // GTK 4: CaptureGTK (the preview as a widget) and the desktop camera app.
        .systemLibrary(
            name: "CGtk",
            pkgConfig: "gtk4",
            providers: [.apt(["libgtk-4-dev"])]
        ),
        // GDK's Wayland backend (gtk4-wayland): a GTK window's wl_surface and wl_display, handed to a
        // preview that draws into the application's own surface (examples/gtk-preview).
        .systemLibrary(
            name: "CGtkWayland",
            pkgConfig: "gtk4-wayland",
            providers: [.apt(["libgtk-4-dev"])]
        ),
        // The stream output's C side: an RTSP media factory whose media is built in code, fed encoded
        // samples; srtsink's caller signals.
        .target(name: "CStreamShim", dependencies: ["CGStreamer", "CGstRTSPServer", "CGStreamerShim"]),
        // Cairo and Pango: overlays (text, shapes, PNG images) are drawn with them.
        .systemLibrary(
            name: "CPangoCairo",
            pkgConfig: "pangocairo",
            providers: [.apt(["libpango1.0-dev", "libcairo2-dev"])]
        ),
        // Only what Swift cannot import: function-like macros, variadic functions, GType macros.
        .target(name: "CGStreamerShim", dependencies: ["CGStreamer"]),
        // V4L2 control ioctls (their request numbers are macros Swift cannot import).
        .target(name: "CV4L2"),
        // Machine-readable code decoding (zbar + zxing-cpp) on grey images: no GStreamer, usable alone.
        .target(name: "Barcodes", dependencies: ["CZbar", "CZXing"]),
        // `Locked`, the package's one lock (a pthread mutex), and what is built on it; no product: a
        // module of the package imports it (Capture re-exports it).
        .target(name: "Locking"),
        // Thin typed owning wrappers over GStreamer; no capture semantics.
        .target(name: "GStreamer", dependencies: ["CGStreamer", "CGStreamerShim", "Locking"]),
        // The AVFoundation-style model, the graph compiler and the live reconfigurer.
        .target(name: "Capture", dependencies: ["Locking", "GStreamer", "Barcodes", "CV4L2", "CStreamShim", "CPangoCairo", "CX11"]),
        // One typed controller every control surface acts through (scenarios, keys, HTTP, MQTT, apps),
        // with the confinement of remote callers.
        .target(name: "CaptureControl", dependencies: ["Capture"]),
        // .pipeline files: parsing, diagnostics, the scenario model and runner.
        .target(name: "PipelineFile", dependencies: ["Capture", "CaptureControl", "GStreamer"]),
        // `capture serve`: a small, strict HTTP/1.1 server on POSIX sockets, the web app and its API,
        // one more client of the session (through its SessionController).
        .target(name: "CaptureServer", dependencies: ["Capture", "CaptureControl"]),
        // Test fixtures: the barcode corpus generator (zint, qrencode, ImageMagick) and a child-process
        // runner, and the fuzzer's input generators. Used by the tests, the benchmarks and capture-dev;
        // the shipped capture does not link it.
        .target(name: "CaptureTestSupport", dependencies: ["Capture", "Locking"]),
        // GTK 4 for capture apps: the live preview as a widget (frames handed to GTK without a pixel
        // copy), and the small toolkit layer the desktop camera app is written with.
        .target(name: "CaptureGTK", dependencies: ["Capture", "CGtk", "CGtkShim"]),
        // What CaptureGTK cannot write in Swift: a GdkPaintable (a GObject interface), GDK's X11 calls
        // and cairo-xlib's shared images, glibc's mallopt.
        .target(name: "CGtkShim", dependencies: ["CGtk"]),
        // A session's events and commands over MQTT (libmosquitto on a thread of its own).
        .target(name: "CaptureMQTT", dependencies: ["Capture", "CaptureControl", "CMosquitto"]),
        // The performance benchmarks behind `capture bench`, measured side by side with the peers.
        .target(name: "CaptureBenchmarks", dependencies: ["Capture", "GStreamer", "CaptureTestSupport", "CaptureMQTT"]),
        // The CLI's commands: argument parsing and printing only; `capture` and `capture-dev` run them.
        .target(name: "CaptureCLI", dependencies: ["Capture", "CaptureControl", "PipelineFile", "CaptureServer", "CaptureMQTT"]),
        // The CLI, the binary that ships: a thin main over CaptureCLI. It hands `bench` and `soak` to the
        // capture-dev next to it, so it links no benchmark, fuzzer or test fixture.
        .executableTarget(name: "capture", dependencies: ["CaptureCLI"]),
        // The developer executable: the CLI plus `bench` and `soak` (benchmarks, soak runs, the fuzzer).
        // Never packaged; `swift build -c release --product capture-dev` puts it next to `capture`.
        .executableTarget(name: "capture-dev", dependencies: ["CaptureCLI", "Capture", "PipelineFile", "CaptureBenchmarks", "CaptureTestSupport"]),
        // examples/: one small program per recipe of the camera cookbook.
        .executableTarget(name: "camera-preview", dependencies: ["Capture"], path: "examples/camera-preview"),
        .executableTarget(name: "take-picture", dependencies: ["Capture"], path: "examples/take-picture"),
        .executableTarget(name: "still-image", dependencies: ["Capture"], path: "examples/still-image"),
        .executableTarget(name: "record-video", dependencies: ["Capture"], path: "examples/record-video"),
        .executableTarget(name: "video-mode-switch", dependencies: ["Capture"], path: "examples/video-mode-switch"),
        .executableTarget(name: "scan-codes", dependencies: ["Capture"], path: "examples/scan-codes"),
        .executableTarget(name: "camera-manager", dependencies: ["Capture"], path: "examples/camera-manager"),
        .executableTarget(name: "custom-overlay", dependencies: ["Capture"], path: "examples/custom-overlay"),
        .executableTarget(name: "edit-video", dependencies: ["Capture"], path: "examples/edit-video"),
        .executableTarget(name: "video-thumbnail", dependencies: ["Capture"], path: "examples/video-thumbnail"),
        .executableTarget(name: "camera-roll-app", dependencies: ["Capture"], path: "examples/camera-roll-app"),
        .executableTarget(name: "photo-library", dependencies: ["Capture"], path: "examples/photo-library"),
        .executableTarget(name: "window-preview", dependencies: ["Capture", "CX11"], path: "examples/window-preview"),
        .executableTarget(name: "gtk-preview", dependencies: ["Capture", "CaptureGTK", "CGtk", "CGtkWayland"], path: "examples/gtk-preview"),
        .executableTarget(name: "camera-app", dependencies: ["Capture", "CaptureControl", "CaptureGTK", "CGtk"], path: "examples/camera-app"),
        .testTarget(name: "GStreamerTests", dependencies: ["GStreamer", "Locking"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "Barcodes", "GStreamer", "CGStreamer", "CaptureTestSupport"]),
        .testTarget(name: "PipelineFileTests", dependencies: ["PipelineFile", "Capture", "CaptureControl", "CaptureMQTT", "CaptureTestSupport"]),
        .testTarget(name: "CaptureControlTests", dependencies: ["CaptureControl", "Capture"]),
        .testTarget(name: "CLITests", dependencies: ["Capture", "CaptureTestSupport"]),
        .testTarget(name: "CaptureServerTests", dependencies: ["CaptureServer", "Capture", "CaptureControl", "PipelineFile", "CaptureTestSupport"]),
    ],
    cxxLanguageStandard: .cxx17
)
