import Capture
import Foundation
import PipelineFile

enum ScanCommand {
    static let help = """
        usage: capture scan [-i INPUT] [--types LIST] [--json] [--count N] [--timeout D] [--rect-of-interest X,Y,W,H]
                            [--backend auto|zbar|zxing] [--every-frame]

        Prints machine-readable codes as they come into view, like AVCaptureMetadataOutput: one line (or one
        JSON object: type, value, corners, time) per code, once per appearance.
          -i, --input INPUT        the camera, or file:VIDEO to scan a recorded video (default: the first camera);
                                   a video's frames are all decoded, however busy the machine (it plays slower)
          --types LIST             comma-separated: qr, micro-qr, aztec, pdf417, micro-pdf417, data-matrix, ean-8,
                                   ean-13, upc-a, upc-e, code-39, code-39-mod-43, code-93, code-128, itf, itf-14,
                                   codabar, databar, databar-expanded, databar-limited (default: all); AVFoundation's
                                   names (code39Mod43, interleaved2of5 ...) are taken too
          --every-frame            as iOS delivers them: one line (or JSON object: time, codes) per decoded frame in
                                   which codes are read, with their corners in that frame, then one empty line ([]
                                   in JSON) when none is left
          --count N                exit after N codes (with --every-frame: after N frames with codes)
          --timeout D              exit after D (2.5, "500ms", "2s", "1.5m")
          --rect-of-interest X,Y,W,H  only look inside this normalized rectangle
          --backend                auto (default: zbar and zxing-cpp, each for what it reads best), zbar, zxing
        Exit: 0 when --count codes were read (or, without --count, when the input ended or the timeout passed),
        1 when --count was not reached, 64 usage, 69 input unavailable.
        """

    static let spec = Arguments.Spec(
        options: ["input", "types", "count", "timeout", "rect-of-interest", "backend"],
        flags: ["json", "every-frame"], aliases: ["i": "input"])

    struct Options {
        var input = "default"
        var count: Int?
        var timeout: Duration?
        var json = false
        var everyFrame = false
        /// The metadata output, its backend, types and rectangle of interest set.
        var metadata: CaptureMetadataOutput
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        try parsed.noPositionals()
        let metadata = CaptureMetadataOutput(name: "codes")
        do throws(CaptureError) {
            if let backend = parsed.value("backend") { try metadata.setBackend(named: backend) }
            if let types = parsed.value("types") {
                try metadata.setMetadataObjectTypes(named: types.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            }
        } catch {
            throw Arguments.UsageError(description: error.description)
        }
        if let rect = try parsed.normalizedRect("rect-of-interest") { metadata.rectOfInterest = rect }
        return Options(
            input: parsed.value("input") ?? "default", count: try parsed.int("count", range: 1...1_000_000),
            timeout: try parsed.duration("timeout"), json: parsed.flag("json"), everyFrame: parsed.flag("every-frame"), metadata: metadata)
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let (metadata, count, timeout) = (options.metadata, options.count, options.timeout)
        let session = CaptureSession(name: "capture-scan")
        let device = try CaptureDevice.resolve(options.input)
        try session.addInput(CaptureDeviceInput(device: device, name: "camera"))
        if options.everyFrame { metadata.delivery = .everyFrame }
        // A recorded video is scanned whole: no frame is skipped because the machine is busy.
        if case .file = device.kind { metadata.discardsLateFrames = false }
        try session.addOutput(metadata)
        let codes = metadata.metadataObjects()
        let frames = metadata.metadataObjectsPerFrame()
        let events = session.events()
        try await session.startRunning()
        let start = ContinuousClock.now
        let (json, everyFrame) = (options.json, options.everyFrame)
        let stop = GracefulStop { Task { await session.stopRunning() } }
        // What was printed is counted as it is printed: when the input ends or the time is up first, the
        // count is still the number of codes printed (it was once lost, and "read 0 of 3" said after two).
        let printed = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                if everyFrame {
                    for await list in frames {
                        let seconds = (ContinuousClock.now - start).seconds
                        emit(json ? jsonFrameLine(list, time: seconds) : readableFrameLine(list, time: seconds))
                        let seen = printed.withLock { value -> Int in
                            if !list.isEmpty { value += 1 }
                            return value
                        }
                        if let count, seen >= count { break }
                    }
                } else {
                    for await code in codes {
                        let seconds = (ContinuousClock.now - start).seconds
                        emit(json ? jsonLine(code, time: seconds) : readableLine(code, time: seconds))
                        let seen = printed.withLock { value -> Int in
                            value += 1
                            return value
                        }
                        if let count, seen >= count { break }
                    }
                }
            }
            // The session ends by itself when a file input reaches its end, or on Ctrl-C.
            group.addTask {
                for await event in events where event.name == "session-stopped" { break }
            }
            if let timeout {
                group.addTask { try? await Task.sleep(for: timeout) }
            }
            // The first to finish (enough codes, the end of the input, the time) ends the scan.
            await group.next()
            group.cancelAll()
        }
        stop.cancel()
        await session.stopRunning()
        let total = printed.value
        let unit = everyFrame ? "frames with codes" : "codes"
        let (decoded, received) = (metadata.decodedFrameCount, metadata.receivedFrameCount)
        let skipped = decoded < received ? " (the rest arrived while one was being decoded)" : ""
        printError("scanned \(decoded) of \(received) frames\(skipped), \(total) \(unit)")
        if let count, total < count {
            printError("read \(total) of \(count) \(unit)")
            return ExitCode.failure
        }
        return ExitCode.success
    }

    /// One decoded frame's codes (`--every-frame --json`): its time and every code with its corners.
    static func jsonFrameLine(_ codes: [MetadataMachineReadableCodeObject], time: Double) -> String {
        let items = codes.map { code -> EventValue in
            .object([
                EventField("type", .string(code.type.rawValue)), EventField("value", .string(code.stringValue)),
                EventField("corners", cornersValue(code)),
            ])
        }
        return EventValue.object([EventField("time", .double(time)), EventField("codes", .array(items))]).json
    }

    /// One decoded frame's codes (`--every-frame`): the time, then each code as `readableLine` shows it
    /// (without its time), separated by ` | `; only the time when the codes have left.
    static func readableFrameLine(_ codes: [MetadataMachineReadableCodeObject], time: Double) -> String {
        String(format: "%8.3f  ", time) + (codes.isEmpty ? "(none)" : codes.map(codeText).joined(separator: " | "))
    }

    static func cornersValue(_ code: MetadataMachineReadableCodeObject) -> EventValue {
        .array(code.corners.map { .array([.double($0.x), .double($0.y)]) })
    }

    static func jsonLine(_ code: MetadataMachineReadableCodeObject, time: Double) -> String {
        let fields: [(String, EventValue)] = [
            ("type", .string(code.type.rawValue)), ("value", .string(code.stringValue)),
            ("corners", cornersValue(code)), ("time", .double(time)),
        ]
        return "{" + fields.map { "\(EventValue.string($0.0).json): \($0.1.json)" }.joined(separator: ", ") + "}"
    }

    static func readableLine(_ code: MetadataMachineReadableCodeObject, time: Double) -> String {
        String(format: "%8.3f  ", time) + codeText(code)
    }

    /// A code's type, value and corners on one line.
    static func codeText(_ code: MetadataMachineReadableCodeObject) -> String {
        let corners = code.corners.map { String(format: "%.3f,%.3f", $0.x, $0.y) }.joined(separator: " ")
        // A code's value may hold line breaks (a vCard): escaped, one code stays one line.
        return "\(code.type.rawValue)  \(FileNaming.printable(code.stringValue))  [\(corners)]"
    }
}
