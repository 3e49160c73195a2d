import Foundation
import Testing

/// `capture controls` and the controls in `capture devices`, on the test pattern's simulated controls.
@Suite struct ControlsCommandTests {
    @Test func controlsListsSettableControlsAndFeatures() throws {
        let text = try capture(["controls", "-i", "test-pattern"])
        #expect(text.status == 0, "\(text.error)")
        #expect(text.output.contains("control: brightness = 128 [0..255, default 128] (integer, settable)"))
        #expect(text.output.contains("control: white_balance_temperature = 6500 [2800..10000, default 6500] (integer, settable, inactive)"))
        #expect(text.output.contains("feature: focus-mode: unsupported"))
        #expect(text.output.contains("feature: zoom: 1-8 (control)"))
        let json = try capture(["controls", "-i", "test-pattern", "--json"])
        #expect(json.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let controls = try #require(report["controls"] as? [[String: Any]])
        #expect(
            controls.map { $0["key"] as? String } == [
                "brightness", "contrast", "saturation", "hue", "white_balance_automatic",
                "white_balance_temperature", "zoom_absolute",
            ])
        #expect(controls.allSatisfy { $0["settable"] as? Bool == true })
        let features = try #require(report["features"] as? [String: String])
        #expect(features["white-balance-mode"] == "locked, auto, continuous" && features["torch"] == "unsupported")
        // `capture devices` says the same of each control.
        let devices = try capture(["devices"])
        #expect(devices.output.contains("control: zoom_absolute = 100 [100..800, default 100] (integer, settable)"))
        #expect(devices.output.contains("features: white-balance-mode (locked, auto, continuous)"))
    }

    @Test func controlsSetsInTheOrderGivenAndReadsBack() throws {
        let set = try capture([
            "controls", "-i", "test-pattern", "brightness=200", "zoom=2", "white_balance_automatic=false",
            "white-balance-temperature=3000", "--json",
        ])
        #expect(set.status == 0, "\(set.error)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(set.output.utf8)) as? [String: Any])
        let values = Dictionary(
            uniqueKeysWithValues: try #require(report["controls"] as? [[String: Any]]).compactMap { control in
                (control["key"] as? String).map { ($0, control["value"] as? Int) }
            })
        #expect(values["brightness"] == 200 && values["zoom_absolute"] == 200)
        #expect(values["white_balance_automatic"] == 0 && values["white_balance_temperature"] == 3000)
    }

    @Test func badSettingsExitWithTheContractsCodes() throws {
        let range = try capture(["controls", "-i", "test-pattern", "brightness=300"])
        #expect(range.status == 65 && range.error.contains("300 is out of range for brightness of the device 'test-pattern': 0 to 255"))
        let unknown = try capture(["controls", "-i", "test-pattern", "sharpness=1"])
        #expect(unknown.status == 65 && unknown.error.contains("has no control 'sharpness'"))
        let lacking = try capture(["controls", "-i", "test-pattern", "focus-mode=continuous"])
        #expect(lacking.status == 69 && lacking.error.contains("does not support focus-mode=continuous: it has no focus_automatic_continuous control"))
        let torch = try capture(["controls", "-i", "test-pattern", "torch-mode=on"])
        #expect(torch.status == 69)
        let syntax = try capture(["controls", "-i", "test-pattern", "zoom=wide"])
        #expect(syntax.status == 65 && syntax.error.contains("zoom=wide: zoom must be a number of 1 or more"))
        let notKeyValue = try capture(["controls", "-i", "test-pattern", "brightness"])
        #expect(notKeyValue.status == 65 && notKeyValue.error.contains("a setting is KEY=VALUE"))
        let audio = try capture(["controls", "-i", "test-tone"])
        #expect(audio.status == 65)
        let missing = try capture(["controls", "-i", "/dev/video99"])
        #expect(missing.status == 69)
    }
}
