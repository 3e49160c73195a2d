import Capture
import CaptureControl
import Foundation
import PipelineFile

/// Single keys for `capture run` on a terminal, the buttons of a camera app: space takes a photo, f
/// cycles the flash mode, c switches the camera, r starts or stops recording, q stops the run. Each
/// key is a command of the session's `SessionController` (the one the scenario, the web app and MQTT
/// use), performed as a local caller, so a text overlay showing `{flash-mode}` or `{camera}` follows
/// the keys too.
///
/// The terminal is put in non-canonical mode without echo while it runs (Ctrl-C still signals) and
/// restored when it stops or the process exits.
final class TerminalKeys: @unchecked Sendable {
    // @unchecked: `stopped` is an atomic flag; the saved terminal settings are written once, before the
    // reading thread starts, and read when it has ended (or at exit).
    private let runner: ScenarioRunner
    private let stopped = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    /// The keys and what they do, as the help line shows them.
    static let help = "keys: space photo · f flash · c camera · r record · q quit"

    /// Starts reading keys when standard input and standard error are a terminal; nil otherwise.
    static func start(for runner: ScenarioRunner) -> TerminalKeys? {
        guard isatty(STDIN_FILENO) == 1, isatty(STDERR_FILENO) == 1, TerminalMode.enter() else { return nil }
        let keys = TerminalKeys(runner: runner)
        printError(help)
        let thread = Thread { keys.readKeys() }
        thread.name = "capture.terminal-keys"
        thread.start()
        return keys
    }

    private init(runner: ScenarioRunner) { self.runner = runner }

    /// Stops reading and gives the terminal its settings back.
    func stop() {
        stopped.value = true
        finished.wait()
        TerminalMode.leave()
    }

    private func readKeys() {
        defer { finished.signal() }
        while !stopped.value {
            var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            // Wakes every 100 ms to see whether the run ended.
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(STDIN_FILENO, &byte, 1) == 1 else { return }  // end of input: no more keys
            press(byte)
        }
    }

    private func press(_ key: UInt8) {
        let runner = self.runner
        switch key {
        case UInt8(ascii: " "):
            guard runner.controller?.photoOutput != nil else { return say("no photo output") }
            perform(.takePhoto(PhotoRequest()))
        case UInt8(ascii: "f"):
            perform(.toggleFlash(output: nil))
        case UInt8(ascii: "c"):
            perform(.switchCamera(position: nil))
        case UInt8(ascii: "r"):
            guard let movie = runner.controller?.movieOutput else { return say("no movie output") }
            perform(movie.isRecording ? .stopRecording(output: movie.name) : .startRecording(output: movie.name, location: nil))
        case UInt8(ascii: "q"):
            runner.requestStop()
        case UInt8(ascii: "h"), UInt8(ascii: "?"):
            say(Self.help)
        default:
            break
        }
    }

    /// The command on a task of its own (the key reader goes on); a failure is printed here and
    /// reported by the runner as an `action-failed` event.
    private func perform(_ command: ControlCommand) {
        guard let controller = runner.controller else { return say("the session is not set up yet") }
        Task {
            do throws(CaptureError) { try await controller.perform(command) } catch { printError("\(command.name): \(error.description)") }
        }
    }

    private func say(_ text: String) { printError(text) }
}

/// The terminal's settings while keys are read: no line buffering, no echo.
enum TerminalMode {
    private static let saved = Locked<termios?>(nil)

    /// Enters key-at-a-time mode; false when the terminal's settings cannot be read.
    static func enter() -> Bool {
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else { return false }
        saved.value = settings
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        return tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0
    }

    /// Gives the terminal back its settings (once; later calls do nothing). `ProcessEnd.exit` calls it,
    /// whichever way the process ends.
    static func leave() {
        guard
            var settings = saved.withLock({ saved -> termios? in
                defer { saved = nil }
                return saved
            })
        else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }
}
