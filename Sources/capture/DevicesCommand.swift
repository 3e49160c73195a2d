import Capture
import Foundation

enum DevicesCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(arguments, options: [], flags: ["json"])
        guard parsed.positionals.isEmpty else { throw Arguments.UsageError(description: "unexpected argument '\(parsed.positionals[0])'") }
        let devices = CaptureDevice.devices.map(DeviceSummary.init)
        if parsed.flag("json") {
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
            for control in device.controls {
                let value = control.value.map(String.init) ?? "?"
                print("    control: \(control.key) = \(value) [\(control.minimum)..\(control.maximum), default \(control.defaultValue)] (\(control.type))")
            }
        }
        return ExitCode.success
    }
}
