import Capture
import Foundation
import PipelineFile

enum ScanCommand {
    static let help = """
        usage: capture scan [-i INPUT] [--types LIST] [--json] [--count N] [--timeout D] [--rect-of-interest X,Y,W,H]
                            [--backend auto|zbar|zxing]

        Prints machine-readable codes as they come into view, like AVCaptureMetadataOutput: one line (or one
        JSON object: type, value, corners, time) per code, once per appearance.
          -i, --input INPUT        the camera, or file:VIDEO to scan a recorded video (default: the first camera)
          --types LIST             comma-separated: qr, micro-qr, aztec, pdf417, data-matrix, ean-8, ean-13, upc-a,
                                   upc-e, code-39, code-93, code-128, itf, codabar, databar (default: all)
          --count N                exit after N codes
          --timeout D              exit after D (2.5, "500ms", "2s", "1.5m")
          --rect-of-interest X,Y,W,H  only look inside this normalized rectangle
          --backend                auto (default: zbar and zxing-cpp, each for what it reads best), zbar, zxing
        Exit: 0 when --count codes were read (or, without --count, when the input ended or the timeout passed),
        1 when --count was not reached, 64 usage, 69 input unavailable.
        """

    static let spec = Arguments.Spec(
        options: ["input", "types", "count", "timeout", "rect-of-interest", "backend"],
        flags: ["json"], aliases: ["i": "input"])

    struct Options {
        var input = "default"
        var count: Int?
        var timeout: Duration?
        var json = false
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
            timeout: try parsed.duration("timeout"), json: parsed.flag("json"), metadata: metadata)
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let (metadata, count, timeout) = (options.metadata, options.count, options.timeout)
        let session = CaptureSession(name: "capture-scan")
        let device = try CaptureDevice.resolve(options.input)
        try session.addInput(CaptureDeviceInput(device: device, name: "camera"))
        try session.addOutput(metadata)
        let codes = metadata.metadataObjects()
        let events = session.events()
        try await session.startRunning()
        let start = ContinuousClock.now
        let json = options.json
        let stop = GracefulStop { Task { await session.stopRunning() } }
        let printed = await withTaskGroup(of: Int?.self) { group in
            group.addTask {
                var seen = 0
                for await code in codes {
                    let time = (ContinuousClock.now - start)
                    let seconds = time.seconds
                    emit(json ? jsonLine(code, time: seconds) : readableLine(code, time: seconds))
                    seen += 1
                    if let count, seen >= count { break }
                }
                return seen
            }
            // The session ends by itself when a file input reaches its end, or on Ctrl-C.
            group.addTask {
                for await event in events where event.name == "session-stopped" { break }
                return nil
            }
            if let timeout {
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return nil
                }
            }
            var result = 0
            while let next = await group.next() {
                if let seen = next { result = seen; break }
                // The session stopped or the time is up: give the decoder a moment to hand over what it has.
                break
            }
            group.cancelAll()
            return result
        }
        stop.cancel()
        await session.stopRunning()
        printError(
            "scanned \(metadata.decodedFrameCount) of \(metadata.receivedFrameCount) frames (the rest arrived while one was being decoded), \(printed) codes")
        let seenTotal = max(printed, 0)
        if let count, seenTotal < count {
            printError("read \(seenTotal) of \(count) codes")
            return ExitCode.failure
        }
        return ExitCode.success
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
        let corners = code.corners.map { String(format: "%.3f,%.3f", $0.x, $0.y) }.joined(separator: " ")
        // A code's value may hold line breaks (a vCard): escaped, one code stays one line.
        return String(format: "%8.3f  ", time) + "\(code.type.rawValue)  \(FileNaming.printable(code.stringValue))  [\(corners)]"
    }
}
