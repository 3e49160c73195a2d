import Foundation

/// `capture bench`: its options and help. The benchmarks run in capture-dev (`BenchCommand.run` there),
/// which `capture` hands the command to (`DeveloperCommands`).
package enum BenchCommand {
    package static let spec = Arguments.Spec(
        options: ["only", "seconds", "movie-seconds", "input", "cycles", "plot-data", "streams", "stream-seconds", "stream-pattern"],
        flags: ["json"], aliases: ["i": "input"])

    package static let help = """
        usage: capture bench [--json] [--only NAME[,NAME]] [--seconds S] [-i INPUT] [--cycles N] [--plot-data FILE.json]
                             [--streams N] [--stream-seconds S] [--stream-pattern smpte|ball|snow]

        Runs the performance benchmarks, each side by side with its peer in the same run:
          startup        startRunning() to the first frame delivered to Swift
          live-edit-gap  the largest frame gap on a running output while another output is added and removed,
                         against the gap of a stopRunning + startRunning rebuild
          cpu            CPU use of a session against gst-launch-1.0 running the same compiled pipeline
          overlay        CPU per frame of a text + PNG overlay on a 720p30 preview, against textoverlay +
                         gdkpixbufoverlay in gst-launch-1.0 (each the difference with the same pipeline without)
          photo          shot-to-save and shot-to-shot against camerabin, shutter lag with/without zero-shutter-lag
          movie          CPU use and dropped frames of a 720p30 H.264 + AAC recording (--movie-seconds, default 60)
          mode-switch    photo -> video (1 s recording) -> photo on one running session, against camerabin and
                         against a stopRunning + reconfigure + startRunning rebuild: the largest preview frame gap
                         by arrival and by buffer timestamps, and the frames lost
          streaming      N sessions (--streams, default 8) each serving a 640x480 30 fps test pattern over RTSP
                         to an ffmpeg reader and publishing its events to a Mosquitto broker on 127.0.0.1, for
                         --stream-seconds (default 60): CPU per stream, frames not handed on, bit rate, events
                         delivered against published (needs mosquitto, mosquitto-clients and ffmpeg);
                         --stream-pattern: smpte (still bars, default), ball (motion), snow (noise: the dearest)
          --seconds S    how long the CPU benchmark runs each side (default 5)
          -i INPUT       the camera of the startup, live-edit-gap and mode-switch benchmarks (default: test-pattern;
                         a real camera shows what a rebuild costs when its driver stops and starts streaming)
          --cycles N     mode-switch cycles on each side, 1 to 10 (default 3); the figures are their median
          --plot-data F  mode-switch writes one cycle of each side (the frame intervals over time) to F as JSON;
                         scripts/plot-mode-switch.py draws it
        """
}

/// `capture soak`: its options and help. The soak runs and the fuzzer are in capture-dev (`SoakCommand.run`
/// there), which `capture` hands the command to (`DeveloperCommands`).
package enum SoakCommand {
    package static let help = """
        usage: capture soak [--cycles N] [--output-dir DIR] [--json FILE]
               capture soak --recording SECONDS [--photo-interval SECONDS] [--output-dir DIR] [--json FILE]
               capture soak --fuzz N [--seed N] [--seeds DIR] [--output-dir DIR]
               capture soak --measure MOVIE [--framerate N]

        On one running session, N times (default 1000): a photo; the microphone and a movie output join in
        one configuration block; 1 s recorded, the camera switched in the middle (the test pattern's bars
        and its ball take turns); back in one block; a photo; an output added and removed. Every step has a
        deadline. Resident memory (as it is, and once glibc has handed back its free pages), descriptors and
        threads are sampled after each cycle; every movie is decoded with ffmpeg at the end. Files go to DIR
        (default ./soak, made if missing). --json FILE writes the report (the samples for
        scripts/plot-soak.py).
        Exit 0 when no step failed, every movie decodes, held memory grew less than 5 MB from cycle 100 on
        and descriptors and threads stayed flat; 1 otherwise.

        --recording SECONDS: one recording that long instead (`make soak-recording`: an hour) at 720p30 from
        the test pattern and test tone, with a barcode branch reading the same frames and a photo every
        --photo-interval (default 10 s). Memory is sampled every 10 s; at the end ffprobe reads every packet
        and ffmpeg decodes the file. Exit 0 when no frame was dropped or is missing from the file, audio and
        video spans differ by less than one frame, the file decodes, every photo was saved and memory grew
        less than 5 MB from minute five on.

        --measure MOVIE: measures a recording already made (the long recording's file, or any 30 fps movie
        with sound; --framerate for another rate) the same way and exits 0 when it passes those checks.

        --fuzz N: N generated and mutated inputs (`make soak`: 1,000,000) instead, without a camera: half
        .pipeline bytes for the reader (some with --set overrides; the valid files under --seeds DIR, default
        Pipelines when it is there, are mutated), a quarter argument vectors for every command's options, a
        quarter hostile locations (printf directives, control characters, combining marks). Every answer is
        checked: a document that writes back to itself or located, printable diagnostics; options or a
        printable usage error; a location accepted only when it names a file with at most one number
        directive. Inputs that break a rule are saved in DIR/fuzz-findings. --seed makes another run.
        Exit 0 when nothing broke a rule, no input took 2 s, and memory grew less than 32 MB.
        """

    package static let spec = Arguments.Spec(options: [
        "cycles", "output-dir", "json", "recording", "photo-interval", "fuzz", "seed", "seeds", "measure", "framerate",
    ])
}

/// `bench` and `soak` run in the developer executable, `capture-dev`: it links the benchmarks, the soak
/// runs, the fuzzer and their fixtures (the barcode corpus generator, a child-process runner), and the
/// shipped `capture` links none of them. Their options and help are above, where the CLI's command
/// table finds them, so `capture bench --help`, the manual page and the completions need no capture-dev;
/// the command itself is handed to the capture-dev next to this binary.
enum DeveloperCommands {
    /// The developer executable, in the same folder as `capture` (the build folder it was built in).
    static let executable = "capture-dev"

    /// Replaces this process with the capture-dev next to this binary (`execv`, no shell): the same
    /// process, environment, working folder and standard streams, and the arguments exactly as given
    /// (the bytes of argv from the command's name on), so its exit status and the signals it gets are
    /// the command's own. Returns only when capture-dev is missing or cannot start, with the exit status
    /// to end with (69, unavailable), having said how to build it.
    static func handOff(_ command: String) -> Int32 {
        let folder = ownFolder()
        let path = folder + [UInt8(ascii: "/")] + Array(executable.utf8)
        let shown = String(decoding: path, as: UTF8.self)
        let cPath = path.map { CChar(bitPattern: $0) } + [0]
        guard access(cPath, X_OK) == 0 else {
            let build = shown.hasSuffix("/debug/\(executable)") ? "swift build" : "swift build -c release"
            printError(
                "`capture \(command)` runs in the developer executable \(executable), which is not next to this capture (no \(shown)): "
                    + "build it in the source tree with `\(build) --product \(executable)` (or `make build`); installed packages ship capture only")
            return ExitCode.unavailable
        }
        // The signal mask passes through exec, and a thread of the concurrency pool blocks signals:
        // capture-dev would never see the SIGINT that stops a soak.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        fflush(nil)
        let executablePath = strdup(cPath)
        let argv: [UnsafeMutablePointer<CChar>?] = [executablePath] + (1..<Int(CommandLine.argc)).map { CommandLine.unsafeArgv[$0] } + [nil]
        execv(cPath, argv)
        let reason = String(cString: strerror(errno))
        free(executablePath)
        printError("cannot start \(shown): \(reason)")
        return ExitCode.unavailable
    }

    /// The folder of this process's own binary (/proc/self/exe, links resolved), as bytes; "." when it
    /// cannot be read.
    static func ownFolder() -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path = count > 0 ? buffer[..<count].map { UInt8(bitPattern: $0) } : []
        guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else { return Array(".".utf8) }
        return Array(path[..<slash])
    }
}
