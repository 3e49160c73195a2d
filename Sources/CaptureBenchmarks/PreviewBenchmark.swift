import Capture
import CaptureTestSupport
import Foundation

extension Benchmarks {
    /// The live preview in a desktop window, 720p30 test pattern shown 1:1 in a 1280x720 window, on an
    /// X server of the benchmark's own (Xvfb): CaptureGTK's GTK 4 view (examples/gtk-preview, GTK's
    /// cairo renderer: Xvfb has no GPU) against gst-launch-1.0 with gtksink (GTK 3) and with ximagesink
    /// showing the same source, one after the other in one run. Each process's CPU time is read from
    /// /proc in its steady state (from 2 s after it started, for `seconds`); latency is GStreamer's
    /// latency tracer (source to sink, median over the same seconds) in every process, and for the GTK 4
    /// view also the hand-over from the sink to GTK's screen, which the peers' figures do not include.
    static func previewWindow(seconds: Double, log: @Sendable (String) -> Void) async throws -> [BenchmarkResult] {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let program = folder.appendingPathComponent("gtk-preview").path
        let windowProgram = folder.appendingPathComponent("window-preview").path
        for path in [program, windowProgram] where !FileManager.default.isExecutableFile(atPath: path) {
            let name = URL(fileURLWithPath: path).lastPathComponent
            throw BenchmarkError("the preview benchmark runs \(path): build it with `swift build -c release --product \(name)` (make bench does)")
        }
        // Starting and stopping the X server waits for it: on a thread of its own, not the pool's.
        guard let display = await onOwnThread({ try? VirtualDisplay() }) else { throw BenchmarkError("no X server could be started (is xvfb installed?)") }
        let source = [
            "videotestsrc", "is-live=true", "pattern=smpte", "!", "video/x-raw,format=I420,width=1280,height=720,framerate=30/1", "!", "videoconvert", "!",
        ]
        let contenders: [(name: String, arguments: [String])] = [
            (
                "CaptureGTK view (GTK 4)",
                [program, "--input", "test-pattern", "--preset", "hd1280x720", "--size", "1280x720", "--seconds", "\(Int(seconds) + 4)"]
            ),
            ("gst-launch-1.0 ... ! gtksink (GTK 3)", ["gst-launch-1.0", "-q"] + source + ["gtksink"]),
            ("gst-launch-1.0 ... ! ximagesink", ["gst-launch-1.0", "-q"] + source + ["ximagesink"]),
            (
                "the preview in the application's X11 window (setWindowHandle)",
                [windowProgram, "--input", "test-pattern", "--preset", "hd1280x720", "--size", "1280x720", "--seconds", "\(Int(seconds) + 4)"]
            ),
        ]
        var measured: [(cpu: Double, server: Double, latency: Double?, handOver: Double?)] = []
        for contender in contenders {
            log("preview in a window: \(contender.name) (\(Int(seconds)) s) ...")
            let environment = ProcessInfo.processInfo.environment.merging([
                "DISPLAY": display.name, "GSK_RENDERER": "cairo", "GTK_A11Y": "none", "NO_AT_BRIDGE": "1",
                "GST_TRACERS": "latency", "GST_DEBUG": "GST_TRACER:7", "GST_DEBUG_NO_COLOR": "1",
            ]) { $1 }
            let child: ChildProcess
            do { child = try ChildProcess(contender.arguments, environment: environment) } catch {
                await onOwnThread { display.stop() }
                throw error
            }
            let output = child.collectOutput(includingErrors: true)
            try await Task.sleep(for: .seconds(2))
            let before = child.cpuSecondsSoFar ?? 0
            let serverBefore = display.cpuSecondsSoFar
            let linesBefore = output.lines.count
            let start = ContinuousClock.now
            try await Task.sleep(for: .seconds(seconds))
            let elapsed = (ContinuousClock.now - start).seconds
            let cpu = ((child.cpuSecondsSoFar ?? before) - before) / elapsed
            let server = (display.cpuSecondsSoFar - serverBefore) / elapsed
            let window = Array(output.lines.dropFirst(linesBefore))
            child.signal(SIGINT)
            _ = await child.ended()
            let latencies = window.compactMap(Self.tracerLatency)
            let handOver = output.lines.lazy.compactMap(Self.handOver).first
            measured.append((cpu * 100, server * 100, latencies.isEmpty ? nil : median(latencies), handOver))
        }
        await onOwnThread { display.stop() }
        var results: [BenchmarkResult] = []
        // The GTK 4 view against both peers, the X11 window handle against the sink it uses.
        for (oursIndex, index) in [(0, 1), (0, 2), (3, 2)] {
            let (ours, peer, name) = (measured[oursIndex], measured[index], contenders[oursIndex].name)
            results.append(
                BenchmarkResult(
                    name: "CPU of a 720p30 preview in a 1280x720 window: \(name)", value: ours.cpu, unit: "% of one core",
                    peer: contenders[index].name, peerValue: peer.cpu,
                    note: String(
                        format: "whole process, steady state over %d s; the X server (Xvfb) used %.1f %% beside ours, %.1f %% beside the peer",
                        Int(seconds), ours.server, peer.server)))
            results.append(
                BenchmarkResult(
                    name: "CPU of a 720p30 preview in a 1280x720 window, X server included: \(name)", value: ours.cpu + ours.server, unit: "% of one core",
                    peer: contenders[index].name, peerValue: peer.cpu + peer.server, note: "the process and Xvfb, which draws the pixels for both"))
            if let latency = ours.latency, let peerLatency = peer.latency {
                results.append(
                    BenchmarkResult(
                        name: "preview latency, source to sink (GStreamer latency tracer): \(name)", value: latency, unit: "ms",
                        peer: contenders[index].name, peerValue: peerLatency,
                        note: ours.handOver.map {
                            String(format: "the GTK 4 view then hands a frame to GTK's screen in %.1f ms (median), not counted here", $0)
                        }
                            ?? "median over the same seconds"))
            }
        }
        return results
    }

    /// The latency in milliseconds of a latency tracer line (`latency, ... time=(guint64)N, ...`).
    static func tracerLatency(_ line: Substring) -> Double? { tracerLatency(String(line)) }
    static func tracerLatency(_ line: String) -> Double? {
        guard line.contains("latency,"), let range = line.range(of: "time=(guint64)") else { return nil }
        let digits = line[range.upperBound...].prefix { $0.isNumber }
        return Double(digits).map { $0 / 1e6 }
    }

    /// gtk-preview's `hand-over to GTK: median X ms`.
    static func handOver(_ line: String) -> Double? {
        guard line.hasPrefix("hand-over to GTK: median ") else { return nil }
        return Double(line.dropFirst("hand-over to GTK: median ".count).prefix { $0.isNumber || $0 == "." })
    }
}

/// An X server of the benchmark's own: Xvfb picks a free display number itself (`-displayfd`, written
/// to a file of ours), so stale lock files of killed servers or another server starting at the same
/// moment never give the benchmark a display that is not its own. Stopped when done.
final class VirtualDisplay: @unchecked Sendable {
    // @unchecked: set once in init, then only read.
    let name: String
    private let server: ChildProcess

    /// Starts Xvfb and waits (at most 20 s) until it says its display number, which it does once it
    /// accepts connections.
    init() throws {
        let numberFile = FileManager.default.temporaryDirectory.appendingPathComponent("capture-bench-display-\(getpid())").path
        _ = FileManager.default.createFile(atPath: numberFile, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: numberFile) }
        // The file's path is the shell's $0, never part of the script's text.
        let server = try ChildProcess(
            ["/bin/sh", "-c", "exec Xvfb -displayfd 3 -screen 0 1920x1080x24 -nolisten tcp 3>\"$0\"", numberFile], discardOutput: true)
        for _ in 0..<2000 {
            if let text = try? String(contentsOfFile: numberFile, encoding: .utf8), text.hasSuffix("\n"),
                let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                self.name = ":\(number)"
                self.server = server
                return
            }
            usleep(10_000)
        }
        server.signal(SIGKILL)
        _ = server.wait()
        throw BenchmarkError("no X server could be started (is xvfb installed?)")
    }

    /// The X server's CPU time so far, in seconds.
    var cpuSecondsSoFar: Double { server.cpuSecondsSoFar ?? 0 }

    func stop() {
        server.signal(SIGTERM)
        _ = server.wait()
    }
}
