import Capture
import Foundation
import PipelineFile

enum ControlsCommand {
    static let help = """
        usage: capture controls [-i INPUT] [KEY=VALUE...] [--json]

        Reads a device's controls and what it can do (focus, exposure, white balance, flash, torch, low light,
        zoom), or sets them under the device's configuration lock (lockForConfiguration), in the order given,
        then reads them back.
          -i, --input INPUT   the device (default: the first camera, else the test pattern)
          KEY=VALUE           a control by its key: brightness=200, white_balance_automatic=false,
                              power_line_frequency="50 Hz" (a number, true/false, or a menu item's name); or a
                              configure-device setting: zoom=2, focus-mode=continuous, lens-position=0.3,
                              focus-point=0.5,0.5, exposure-mode=custom, exposure-duration=0.01, gain=4,
                              exposure-point=0.5,0.5, exposure-bias=-1, white-balance-mode=locked,
                              white-balance-temperature=3200, torch-mode=on, torch-level=0.5, flash-mode=auto,
                              low-light-boost=true
          --json              one JSON object on stdout: the device, its controls (key, name, type, value,
                              range, default, step, settable, inactive, menu) and its features
        A camera keeps what is set. The test pattern simulates its controls in this process only: set them in
        a .pipeline file (configure-device) to see them in a session's frames.
        Exit: 0; 64 usage; 65 an unknown control or a value out of range; 69 no such device, or it lacks the
        control or feature, or another holder has its lock; 1 the driver refused a value.
        """

    static let spec = Arguments.Spec(options: ["input"], flags: ["json"], aliases: ["i": "input"])

    struct Options {
        var input = "default"
        var settings: [DeviceConfiguration] = []
        var json = false
    }

    /// A setting that cannot be read is invalid data (exit 65), not a usage mistake.
    struct InvalidSetting: Error { let description: String }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Result<Options, InvalidSetting> {
        let parsed = try Arguments(arguments, spec)
        var settings: [DeviceConfiguration] = []
        for argument in parsed.positionals {
            do {
                settings.append(try DeviceConfiguration.parse(setting: argument))
            } catch {
                return .failure(InvalidSetting(description: FileNaming.printable(error.description)))
            }
        }
        return .success(Options(input: parsed.value("input") ?? "default", settings: settings, json: parsed.flag("json")))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options: Options
        switch try parse(arguments) {
        case .success(let parsed): options = parsed
        case .failure(let invalid):
            printError("\(invalid.description); see `capture controls --help`")
            return ExitCode.dataError
        }
        let settings = options.settings
        let device = try CaptureDevice.resolve(options.input)
        guard device.mediaType == .video else {
            throw CaptureError.deviceMediaMismatch(id: device.uniqueID, expected: .video, actual: device.mediaType)
        }
        if !settings.isEmpty {
            try device.lockForConfiguration(holder: "capture controls (process \(ProcessInfo.processInfo.processIdentifier))")
            defer { device.unlockForConfiguration() }
            for setting in settings {
                let changes = try setting.apply(to: device)
                for change in changes where !options.json { printError("set \(change.summary)") }
            }
        }
        let report = ControlsReport(device: device, controls: try device.currentControls(), capabilities: device.capabilities)
        if options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print("\(device.uniqueID)\t\(device.localizedName)")
            for control in report.controls { print("    control: \(control.line)") }
            for (name, value) in device.capabilities.summary { print("    feature: \(name): \(value)") }
        }
        return ExitCode.success
    }
}

/// What `capture controls --json` prints.
struct ControlsReport: Encodable {
    var id: String
    var name: String
    var controls: [DeviceSummary.Control]
    var features: [String: String]

    init(device: CaptureDevice, controls: [DeviceControl], capabilities: DeviceCapabilities) {
        id = device.uniqueID
        name = device.localizedName
        self.controls = controls.map(DeviceSummary.Control.init)
        features = Dictionary(capabilities.summary, uniquingKeysWith: { first, _ in first })
    }
}
