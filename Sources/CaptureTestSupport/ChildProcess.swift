import Capture
import Foundation
import Locking

/// A child process started with a clean signal mask and default signal actions.
///
/// Threads of a Swift program (Dispatch, the concurrency pool) block signals, and a child inherits
/// the mask of the thread that starts it: started with `Foundation.Process`, a program such as
/// `gst-launch-1.0` or `capture` would never see the SIGINT meant to stop it gracefully.
public final class ChildProcess: @unchecked Sendable {
    // Immutable after init, except the pipes' read ends, used by one reader.
    public let pid: pid_t
    private let outputFD: Int32
    private let errorFD: Int32

    /// Starts `arguments[0]` (searched in PATH). Standard output and error go to pipes read with
    /// `readAll()` unless `discardOutput` is true.
    public init(_ arguments: [String], discardOutput: Bool = false, environment: [String: String]? = nil) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        if discardOutput {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        } else {
            guard pipe(&out) == 0, pipe(&err) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            posix_spawn_file_actions_adddup2(&actions, out[1], 1)
            posix_spawn_file_actions_adddup2(&actions, err[1], 2)
            for fd in out + err { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var envp: [UnsafeMutablePointer<CChar>?] = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, arguments[0], &actions, &attributes, &argv, &envp)
        if !discardOutput { close(out[1]); close(err[1]) }
        guard status == 0 else {
            if !discardOutput { close(out[0]); close(err[0]) }
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .ENOENT)
        }
        self.pid = pid
        outputFD = out[0]
        errorFD = err[0]
    }

    deinit {
        if outputFD >= 0 { close(outputFD) }
        if errorFD >= 0 { close(errorFD) }
    }

    public func signal(_ signal: Int32) { kill(pid, signal) }

    /// CPU seconds (user + system) the running child has used so far, from /proc/PID/stat; nil once
    /// it has ended or where /proc is missing.
    public var cpuSecondsSoFar: Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm)": state is field 3, utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Reads standard output on a thread of its own as it comes (for a child that runs on, such as a
    /// subscriber); `text` is what came so far. Standard error is drained too, and kept with standard
    /// output when `includingErrors` (lines of the two may then interleave). Use instead of `finish()`.
    public func collectOutput(includingErrors: Bool = false) -> OutputCollector {
        let collector = OutputCollector()
        for (fd, keep) in [(outputFD, true), (errorFD, includingErrors)] where fd >= 0 {
            let thread = Thread {
                var chunk = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = read(fd, &chunk, chunk.count)
                    if count > 0 {
                        if keep { collector.append(chunk[..<count]) }
                    } else if count < 0 && errno == EINTR {
                        continue
                    } else {
                        break
                    }
                }
            }
            thread.start()
        }
        return collector
    }

    /// Reads standard output and error to their ends (blocking), then waits for the child.
    public func finish() -> (status: Int32, output: String, error: String, cpuSeconds: Double) {
        var stdoutData = [UInt8](), stderrData = [UInt8]()
        if outputFD >= 0 {
            let group = DispatchGroup()
            let errFD = errorFD
            nonisolated(unsafe) var collected = [UInt8]()
            DispatchQueue.global().async(group: group) { collected = Self.readToEnd(errFD) }
            stdoutData = Self.readToEnd(outputFD)
            group.wait()
            stderrData = collected
        }
        let (status, cpu) = wait()
        return (status, String(decoding: stdoutData, as: UTF8.self), String(decoding: stderrData, as: UTF8.self), cpu)
    }

    /// Waits for the child on a thread of its own, so an async caller holds none of the cooperative
    /// pool's threads while it waits; returns what `wait()` returns.
    public func ended() async -> (status: Int32, cpuSeconds: Double) {
        await onOwnThread { self.wait() }
    }

    /// Waits for the child; returns its exit status (128 + signal when killed) and CPU seconds. Blocks
    /// the calling thread: from async code, `ended()`.
    public func wait() -> (status: Int32, cpuSeconds: Double) {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (code, cpu)
    }

    private static func readToEnd(_ fd: Int32) -> [UInt8] {
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count > 0 { data += chunk[..<count] } else if count < 0 && errno == EINTR { continue } else { break }
        }
        return data
    }
}

/// What a child wrote to its standard output so far (see `ChildProcess.collectOutput()`).
public final class OutputCollector: @unchecked Sendable {
    // @unchecked: `bytes` is a Locked.
    private let bytes = Locked<[UInt8]>([])

    func append(_ chunk: ArraySlice<UInt8>) {
        bytes.withLock { $0 += chunk }
    }

    public var text: String {
        bytes.withLock { String(decoding: $0, as: UTF8.self) }
    }

    /// The complete lines so far: split at every newline byte. (Split as Swift Characters, a line that
    /// ends in a carriage return, as a hostile MQTT payload printed by mosquitto_sub can, would join the
    /// next line: "\r\n" is one Character, not "\n".)
    public var lines: [String] {
        bytes.withLock { bytes in
            guard let end = bytes.lastIndex(of: 0x0A) else { return [] }
            return bytes[..<end].split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Waits (bounded) until `condition` holds for the lines; false when `timeout` passed first.
    public func wait(timeout: Duration = .seconds(20), until condition: ([String]) -> Bool) async -> Bool {
        await waitUntil(timeout: timeout) { condition(lines) }
    }
}
