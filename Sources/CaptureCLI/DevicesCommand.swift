import Capture
import Foundation
import PipelineFile

enum DevicesCommand {
    static let help = """
        usage: capture devices [--json]
               capture devices --watch [--json] [--count N] [--timeout D]

        Lists the machine's video and audio capture devices (found by GStreamer's device monitor), then the
        virtual devices test-pattern and test-tone, with id, name, position, formats, controls (each settable or
        read-only) and the features the controls give (focus-mode, exposure-mode, zoom ...; `capture controls`
        reads and sets them).
          --json        one JSON array on stdout (with --watch: one JSON object per event)
          --watch       prints devices as they are connected and disconnected (plugged in, unplugged, driver
                        bound or unbound), like AVCaptureDevice's wasConnected/wasDisconnected notifications,
                        until Ctrl-C; "watching" on stderr says the monitor is listening
          --count N     with --watch: exit after N events
          --timeout D   with --watch: exit after D (2.5, "500ms", "2s", "1.5m")
        Exit: 0; with --watch and --count, 1 when fewer than N events came before the timeout; 64 usage.
        """

    static let spec = Arguments.Spec(options: ["count", "timeout"], flags: ["json", "watch"])

    struct Options {
        var json = false
        var watch = false
        var count: Int?
        var timeout: Duration?
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        try parsed.noPositionals()
        if !parsed.flag("watch") {
            for option in ["count", "timeout"] where parsed.value(option) != nil {
                throw Arguments.UsageError(description: "--\(option) goes with --watch")
            }
        }
        return Options(
            json: parsed.flag("json"), watch: parsed.flag("watch"), count: try parsed.int("count", range: 1...1_000_000),
            timeout: try parsed.duration("timeout"))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        if options.watch { return await watch(options) }
        let devices = CaptureDevice.devices.map(DeviceSummary.init)
        if options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(devices), as: UTF8.self))
            return ExitCode.success
        }
        if !devices.contains(where: { !$0.virtual && $0.media == "video" }) {
            printError("no camera found on this machine; the virtual test-pattern stands in for `default`")
        }
        for device in devices {
            print("\(device.id)\t\(device.name)")
            print("    media: \(device.media), position: \(device.position), element: \(device.element)\(device.virtual ? " (virtual)" : "")")
            for line in device.formatLines { print("    format: \(line)") }
            for control in device.controls { print("    control: \(control.line)") }
            if device.media == "video" {
                let supported = device.features.filter { $0.value != "unsupported" }.sorted { $0.key < $1.key }
                print("    features: " + (supported.isEmpty ? "none" : supported.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")))
            }
        }
        // The encoder movies and streams use (a hardware one only when its one-frame trial worked).
        print("H.264 encoder: \(H264EncoderSelection.current)")
        return ExitCode.success
    }

    /// `--watch`: hot-plug events as they come.
    static func watch(_ options: Options) async -> Int32 {
        let (count, timeout, json) = (options.count, options.timeout, options.json)
        let events = CaptureDevice.connectionEvents()
        printError("watching for devices being connected and disconnected (Ctrl-C to stop)")
        let start = ContinuousClock.now
        let seen = await withTaskGroup(of: Int?.self) { group in
            group.addTask {
                var seen = 0
                for await event in events {
                    emit(line(for: event, at: (ContinuousClock.now - start), json: json))
                    seen += 1
                    if let count, seen >= count { break }
                }
                return seen
            }
            group.addTask {
                let stopped = AsyncStream<Void> { continuation in
                    let stop = GracefulStop(saying: "stopped watching") { continuation.finish() }
                    continuation.onTermination = { _ in stop.cancel() }
                }
                for await _ in stopped {}
                return nil
            }
            if let timeout {
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return nil
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? 0
        }
        if let count, seen < count {
            printError("saw \(seen) of \(count) device events")
            return ExitCode.failure
        }
        return ExitCode.success
    }

    static func line(for event: DeviceEvent, at time: Duration, json: Bool) -> String {
        let seconds = time.seconds
        let device = event.device
        if json {
            let fields: [(String, EventValue)] = [
                ("event", .string(event.name)), ("time", .double(seconds)),
                ("device", .string(device.uniqueID)), ("name", .string(device.localizedName)),
                ("media", .string(device.mediaType.rawValue)),
            ]
            return "{" + fields.map { "\(EventValue.string($0.0).json): \($0.1.json)" }.joined(separator: ", ") + "}"
        }
        return String(format: "%8.3f  ", seconds) + "\(event.name)  \(device.uniqueID)  \(device.localizedName) (\(device.mediaType.rawValue))"
    }
}
