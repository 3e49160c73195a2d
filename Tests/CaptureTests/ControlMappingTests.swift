import Foundation
import Testing

@testable import Capture

/// The mapping between AVFoundation's device features and V4L2 controls, on described devices: no
/// device, no GStreamer.
@Suite struct ControlMappingTests {
    typealias D = DescribedDevices

    /// What a plan does, readable: the writes, then `| then` the writes after settling, `crop=` and
    /// `flash=` when it has them; or the error's name and message.
    static func outcome(_ request: ControlRequest, _ controls: [DeviceControl], crop: Bool = true) -> String {
        do {
            let plan = try ControlMapping.plan(request, controls: controls, device: "cam", cropZoom: crop)
            var parts = [plan.writes.map(\.description).joined(separator: " ")]
            if !plan.afterSettling.isEmpty { parts.append("| then " + plan.afterSettling.map(\.description).joined(separator: " ")) }
            if let zoom = plan.cropZoom { parts.append("crop=\(ControlMapping.format(zoom))") }
            if let flash = plan.flashMode { parts.append("flash=\(flash.rawValue)") }
            return parts.filter { !$0.isEmpty }.joined(separator: " ")
        } catch {
            return "\(error.name): \(error.description)"
        }
    }

    static let webcamTable: [(ControlRequest, String)] = [
        (.focusMode(.continuousAutoFocus), "focus_automatic_continuous=1"),
        (.focusMode(.locked), "focus_automatic_continuous=0"),
        (.focusMode(.autoFocus), "focus_automatic_continuous=1 | then focus_automatic_continuous=0"),
        (.lensPosition(0), "focus_automatic_continuous=0 focus_absolute=250"),
        (.lensPosition(1), "focus_automatic_continuous=0 focus_absolute=0"),
        (.lensPosition(0.51), "focus_automatic_continuous=0 focus_absolute=120"),
        (.lensPosition(1.5), "control-out-of-range: 1.5 is out of range for lens-position of the device 'cam': 0 to 1"),
        (
            .focusPoint(NormalizedPoint(x: 0.5, y: 0.5), frame: Size(width: 640, height: 480)),
            "control-not-supported: the device 'cam' does not support focus-point: it has no region_of_interest_rectangle control"
        ),
        (.exposureMode(.continuousAutoExposure), "auto_exposure=3"),
        (.exposureMode(.locked), "auto_exposure=1"),
        (.exposureMode(.custom), "auto_exposure=1"),
        (.exposureMode(.autoExpose), "auto_exposure=3 | then auto_exposure=1"),
        (.customExposure(duration: .milliseconds(10), gain: 20), "auto_exposure=1 exposure_time_absolute=100 gain=20"),
        (
            .customExposure(duration: .seconds(1), gain: nil),
            "control-out-of-range: 1 s is out of range for exposure-duration of the device 'cam': 0.0003 to 0.2047 s (exposure_time_absolute 3-2047, units of 100 µs)"
        ),
        (.customExposure(duration: nil, gain: 300), "control-out-of-range: 300 is out of range for gain of the device 'cam': 0 to 255"),
        (.exposureBias(1), "control-not-supported: the device 'cam' does not support exposure-bias: it has no auto_exposure_bias control"),
        (.whiteBalanceMode(.continuousAutoWhiteBalance), "white_balance_automatic=1"),
        (.whiteBalanceMode(.locked), "white_balance_automatic=0"),
        (.whiteBalanceMode(.autoWhiteBalance), "white_balance_automatic=1 | then white_balance_automatic=0"),
        (.whiteBalanceTemperature(3200), "white_balance_automatic=0 white_balance_temperature=3200"),
        (
            .whiteBalanceTemperature(9000),
            "control-out-of-range: 9000 is out of range for white-balance-temperature of the device 'cam': 2800 to 6500"
        ),
        (.torch(.on, level: 0.5), "control-not-supported: the device 'cam' does not support torch-mode=on: it has no flash_led_mode control"),
        (.flashMode(.on), "flash-not-supported: the device 'cam' has no flash; use flash-mode=off"),
        (.flashMode(.off), "flash=off"),
        (.lowLightBoost(true), "exposure_dynamic_framerate=1"),
        (.lowLightBoost(false), "exposure_dynamic_framerate=0"),
        (.zoom(2), "zoom_absolute=200"),
        (.zoom(6), "control-out-of-range: 6 is out of range for zoom of the device 'cam': 1 to 5"),
        (.zoom(0.5), "control-out-of-range: 0.5 is out of range for zoom of the device 'cam': 1 to 5"),
        (.control(key: "power_line_frequency", value: 1), "power_line_frequency=1"),
        (
            .control(key: "power_line_frequency", value: 3),
            "control-out-of-range: 3 is out of range for power_line_frequency of the device 'cam': one of 0 (Disabled), 1 (50 Hz), 2 (60 Hz)"
        ),
        (.control(key: "brightness", value: 256), "control-out-of-range: 256 is out of range for brightness of the device 'cam': 0 to 255"),
        (
            .control(key: "white_balance_automatic", value: 2),
            "control-out-of-range: 2 is out of range for white_balance_automatic of the device 'cam': 0 or 1 (false or true)"
        ),
        (
            .control(key: "sharpness", value: 1),
            "unknown-control: the device 'cam' has no control 'sharpness'; its controls are brightness, white_balance_automatic, gain, power_line_frequency, white_balance_temperature, auto_exposure, exposure_time_absolute, exposure_dynamic_framerate, focus_absolute, focus_automatic_continuous, zoom_absolute"
        ),
    ]

    @Test(arguments: webcamTable.indices) func aWebcamsFeaturesMapOntoItsControls(_ index: Int) {
        let (request, expected) = Self.webcamTable[index]
        #expect(Self.outcome(request, D.webcam) == expected, "\(request.summary)")
    }

    static let sensorTable: [(ControlRequest, String)] = [
        (.focusMode(.autoFocus), "auto_focus_start=1"),
        (.focusMode(.locked), ""),
        (
            .focusMode(.continuousAutoFocus),
            "control-not-supported: the device 'cam' does not support focus-mode=continuous: it has no focus_automatic_continuous control"
        ),
        (
            .focusPoint(NormalizedPoint(x: 0.5, y: 0.5), frame: Size(width: 640, height: 480)),
            "region_of_interest_rectangle=80x60@280,210 region_of_interest_auto_ctrls=8"
        ),
        (
            .exposurePoint(NormalizedPoint(x: 0, y: 1), frame: Size(width: 640, height: 480)),
            "region_of_interest_rectangle=80x60@0,420 region_of_interest_auto_ctrls=1"
        ),
        (
            .focusPoint(NormalizedPoint(x: 0.5, y: 0.5), frame: nil),
            "control-failed: the device 'cam' did not take focus-point: the size of its current format is unknown"
        ),
        (.exposureMode(.continuousAutoExposure), "auto_exposure=0"),
        (.exposureMode(.autoExpose), "auto_exposure=0 | then auto_exposure=1"),
        (.customExposure(duration: nil, gain: 100), "auto_exposure=1 analogue_gain=100"),
        (.exposureBias(0.6), "auto_exposure_bias=3"),
        (.exposureBias(-2), "auto_exposure_bias=0"),
        (.exposureBias(3), "control-out-of-range: 3 EV is out of range for exposure-bias of the device 'cam': -2 to 2 EV"),
        (.whiteBalanceMode(.autoWhiteBalance), "do_white_balance=1"),
        (.whiteBalanceMode(.continuousAutoWhiteBalance), "white_balance_auto_preset=1"),
        (.whiteBalanceMode(.locked), "white_balance_auto_preset=0"),
        (
            .whiteBalanceTemperature(4000),
            "control-not-supported: the device 'cam' does not support white-balance-temperature: it has no white_balance_temperature control"
        ),
        (.torch(.on, level: 0.5), "led_mode=2 torch_intensity=50"),
        (.torch(.on, level: nil), "led_mode=2"),
        (.torch(.off, level: nil), "led_mode=0"),
        (.torch(.on, level: 0), "control-out-of-range: 0 is out of range for torch-level of the device 'cam': above 0, up to 1"),
        (.torch(.auto, level: nil), "control-not-supported: the device 'cam' does not support torch-mode=auto: V4L2 has no automatic torch"),
        (.flashMode(.auto), "flash=auto"),
        (.flashFire, "led_mode=1 strobe=1"),
        (.flashRelease(ledMode: 2), "stop_strobe=1 led_mode=2"),
        (
            .lowLightBoost(true),
            "control-not-supported: the device 'cam' does not support low-light-boost: it has no exposure_dynamic_framerate control"
        ),
        (.zoom(2), "crop=2"),
        (.zoom(8), "crop=8"),
        (.zoom(9), "control-out-of-range: 9 is out of range for zoom of the device 'cam': 1 to 8"),
        (
            .control(key: "region_of_interest_rectangle", value: 1),
            "control-not-supported: the device 'cam' does not support region_of_interest_rectangle: a rectangle is set through focus-point or exposure-point"
        ),
        (.control(key: "strobe", value: 0), "strobe=1"),
        (
            .control(key: "region_of_interest_auto_ctrls", value: 0x100),
            "control-out-of-range: 256 is out of range for region_of_interest_auto_ctrls of the device 'cam': a mask of the bits of 255"
        ),
    ]

    @Test(arguments: sensorTable.indices) func aSensorsFeaturesMapOntoItsControls(_ index: Int) {
        let (request, expected) = Self.sensorTable[index]
        #expect(Self.outcome(request, D.sensor) == expected, "\(request.summary)")
    }

    /// vivid has no camera-class control: every camera feature is unsupported, named by its control;
    /// the zoom is the session's crop.
    @Test func vividLacksEveryCameraFeatureButZoomsByCropping() {
        let unsupported: [ControlRequest] = [
            .focusMode(.continuousAutoFocus), .focusMode(.autoFocus), .focusMode(.locked), .lensPosition(0.5),
            .focusPoint(NormalizedPoint(x: 0.5, y: 0.5), frame: Size(width: 640, height: 480)), .exposureMode(.continuousAutoExposure),
            .exposureMode(.locked), .exposureMode(.custom), .exposureMode(.autoExpose), .customExposure(duration: .milliseconds(10), gain: nil),
            .exposurePoint(NormalizedPoint(x: 0.5, y: 0.5), frame: Size(width: 640, height: 480)), .exposureBias(0),
            .whiteBalanceMode(.locked), .whiteBalanceMode(.autoWhiteBalance), .whiteBalanceMode(.continuousAutoWhiteBalance),
            .whiteBalanceTemperature(4000), .torch(.on, level: 1), .torch(.off, level: nil), .lowLightBoost(true),
        ]
        for request in unsupported {
            #expect(Self.outcome(request, D.vivid).hasPrefix("control-not-supported: the device 'cam' does not support "), "\(request.summary)")
        }
        #expect(Self.outcome(.flashMode(.on), D.vivid) == "flash-not-supported: the device 'cam' has no flash; use flash-mode=off")
        #expect(Self.outcome(.flashFire, D.vivid) == "flash-not-supported: the device 'cam' has no flash; use flash-mode=off")
        #expect(Self.outcome(.zoom(2), D.vivid) == "crop=2")
        // vivid's gain is volatile (automatic gain moves it) and writable: it can be set by key.
        #expect(Self.outcome(.control(key: "gain", value: 10), D.vivid) == "gain=10")
        #expect(
            Self.outcome(.customExposure(duration: nil, gain: 10), D.vivid)
                == "control-not-supported: the device 'cam' does not support exposure-mode=custom: it has no auto_exposure or exposure_time_absolute control")
        let caps = ControlMapping.capabilities(of: D.vivid, cropZoom: true)
        var expected = DeviceCapabilities()
        expected.gainRange = 0...255
        expected.zoom = .crop
        expected.maxZoomFactor = 8
        #expect(caps == expected)
    }

    @Test func aDeviceThatIsNotACameraCannotZoom() {
        #expect(
            Self.outcome(.zoom(2), [], crop: false)
                == "control-not-supported: the device 'cam' does not support zoom: it has no zoom_absolute control and is not a camera the session can crop")
        #expect(ControlMapping.capabilities(of: [], cropZoom: false) == DeviceCapabilities())
    }

    @Test func capabilitiesOfTheDescribedDevices() {
        let webcam = ControlMapping.capabilities(of: D.webcam, cropZoom: true)
        #expect(webcam.focusModes == [.locked, .autoFocus, .continuousAutoFocus])
        #expect(!webcam.isFocusPointOfInterestSupported && !webcam.isExposurePointOfInterestSupported)
        #expect(webcam.isLockingFocusWithCustomLensPositionSupported)
        #expect(webcam.exposureModes == [.locked, .autoExpose, .continuousAutoExposure, .custom])
        #expect(webcam.exposureDurationRange == Duration.microseconds(300)...Duration.microseconds(204_700))
        #expect(webcam.gainRange == 0...255)
        #expect(webcam.exposureTargetBiasRange == nil)
        #expect(webcam.whiteBalanceModes == [.locked, .autoWhiteBalance, .continuousAutoWhiteBalance])
        #expect(webcam.whiteBalanceTemperatureRange == 2800...6500)
        #expect(!webcam.hasFlash && !webcam.hasTorch)
        #expect(webcam.isLowLightBoostSupported)
        #expect(webcam.zoom == .control && webcam.maxZoomFactor == 5)

        let sensor = ControlMapping.capabilities(of: D.sensor, cropZoom: true)
        #expect(sensor.focusModes == [.locked, .autoFocus])
        #expect(sensor.isFocusPointOfInterestSupported && sensor.isExposurePointOfInterestSupported)
        #expect(sensor.exposureModes == [.locked, .autoExpose, .continuousAutoExposure, .custom])
        #expect(sensor.exposureTargetBiasRange == -2...2)
        #expect(sensor.gainRange == 0...240)
        #expect(sensor.whiteBalanceModes == [.locked, .autoWhiteBalance, .continuousAutoWhiteBalance])
        #expect(sensor.whiteBalanceTemperatureRange == nil)
        #expect(sensor.hasFlash && sensor.hasTorch)
        #expect(!sensor.isLowLightBoostSupported)
        #expect(sensor.zoom == .crop && sensor.maxZoomFactor == 8)

        // A flash LED without a strobe gives a torch, not a flash; read-only controls give nothing.
        let torchOnly = D.sensor.filter { $0.id != V4L2Control.flashStrobe }
        #expect(ControlMapping.capabilities(of: torchOnly, cropZoom: true).hasTorch)
        #expect(!ControlMapping.capabilities(of: torchOnly, cropZoom: true).hasFlash)
        let readOnly = D.webcam.map { control -> DeviceControl in
            var copy = control
            copy.isReadOnly = true
            return copy
        }
        var cropOnly = DeviceCapabilities()
        cropOnly.zoom = .crop
        cropOnly.maxZoomFactor = 8
        #expect(ControlMapping.capabilities(of: readOnly, cropZoom: true) == cropOnly)
        #expect(
            Self.outcome(.control(key: "brightness", value: 1), readOnly)
                == "control-not-supported: the device 'cam' does not support brightness: it is read-only")
        #expect(
            Self.outcome(.focusMode(.continuousAutoFocus), readOnly)
                == "control-not-supported: the device 'cam' does not support focus-mode=continuous: its focus_automatic_continuous control is read-only")
    }

    @Test func settingsReadFromTheControlsValues() {
        let webcam = ControlMapping.settings(of: D.webcam)
        #expect(webcam.focusMode == .continuousAutoFocus)
        #expect(webcam.lensPosition == 1)
        #expect(webcam.exposureMode == .continuousAutoExposure)
        #expect(webcam.exposureDuration == .milliseconds(25))
        #expect(webcam.gain == 0)
        #expect(webcam.whiteBalanceMode == .continuousAutoWhiteBalance)
        #expect(webcam.whiteBalanceTemperature == 4000)
        #expect(webcam.torchMode == .off)
        #expect(webcam.automaticallyEnablesLowLightBoostWhenAvailable == false)
        #expect(webcam.zoomFactor == 1)

        var lit = D.sensor
        for index in lit.indices {
            switch lit[index].id {
            case V4L2Control.flashLEDMode: lit[index].value = 2
            case V4L2Control.flashTorchIntensity: lit[index].value = 25
            case V4L2Control.exposureAuto: lit[index].value = 1
            case V4L2Control.presetWhiteBalance: lit[index].value = 0
            case V4L2Control.exposureBias: lit[index].value = 1
            default: break
            }
        }
        let sensor = ControlMapping.settings(of: lit)
        #expect(sensor.torchMode == .on && sensor.torchLevel == 0.25)
        #expect(sensor.exposureMode == .locked)
        #expect(sensor.whiteBalanceMode == .locked)
        #expect(sensor.exposureTargetBias == -1)
        #expect(sensor.focusMode == .locked)
        #expect(sensor.zoomFactor == nil)
        #expect(sensor.automaticallyEnablesLowLightBoostWhenAvailable == nil)
    }

    @Test func controlValuesReadFromText() throws {
        let menu = try #require(D.webcam.first { $0.key == "power_line_frequency" })
        let flag = try #require(D.webcam.first { $0.key == "white_balance_automatic" })
        #expect(try ControlMapping.value("50 hz", for: menu, device: "cam") == 1)
        #expect(try ControlMapping.value("2", for: menu, device: "cam") == 2)
        #expect(try ControlMapping.value("false", for: flag, device: "cam") == 0)
        #expect(try ControlMapping.value("on", for: flag, device: "cam") == 1)
        #expect(
            throws: CaptureError.controlOutOfRange(
                device: "cam", control: "power_line_frequency", value: "'70 Hz'",
                range: "a number or a menu item: 0 (Disabled), 1 (50 Hz), 2 (60 Hz)")
        ) {
            try ControlMapping.value("70 Hz", for: menu, device: "cam")
        }
    }

    /// The crop of a zoom keeps the centre, even values, and at least 16 pixels.
    @Test func cropOfAZoom() {
        let size = Size(width: 640, height: 480)
        #expect(SourceTap.crop(size, zoom: 1) == (0, 0, 0, 0))
        #expect(SourceTap.crop(size, zoom: 2) == (160, 160, 120, 120))
        #expect(SourceTap.crop(size, zoom: 3) == (214, 214, 160, 160))
        #expect(SourceTap.crop(size, zoom: 100) == (312, 312, 232, 232))
    }

    /// The white-balance cast of the test pattern moves the chroma of YUV frames and the red and blue
    /// of RGB frames: bluer below 6500 K, oranger above.
    @Test func whiteBalanceCastShiftsTheColours() {
        // A 4x2 I420 frame: Y 8 bytes, U 2, V 2, all 128 (grey).
        var i420 = [UInt8](repeating: 128, count: 12)
        let layout = VideoLayoutInfo(format: "I420", width: 4, height: 2, strides: [4, 2, 2], offsets: [0, 8, 10])
        i420.withUnsafeMutableBytes { WhiteBalanceCast(kelvin: 2800).apply(to: $0, layout: layout) }
        #expect(Array(i420[0..<8]) == [UInt8](repeating: 128, count: 8))
        #expect(Array(i420[8..<10]) == [176, 176])  // U (blue) up by 48
        #expect(Array(i420[10..<12]) == [80, 80])  // V (red) down by 48
        var rgbx: [UInt8] = [100, 100, 100, 0]
        rgbx.withUnsafeMutableBytes {
            WhiteBalanceCast(kelvin: 10200).apply(to: $0, layout: VideoLayoutInfo(format: "RGBx", width: 1, height: 1, strides: [4], offsets: [0]))
        }
        #expect(rgbx == [135, 100, 65, 0])
        var yuy2: [UInt8] = [16, 128, 16, 128]
        yuy2.withUnsafeMutableBytes {
            WhiteBalanceCast.neutral.apply(to: $0, layout: VideoLayoutInfo(format: "YUY2", width: 2, height: 1, strides: [4], offsets: [0]))
        }
        #expect(yuy2 == [16, 128, 16, 128])
        #expect(WhiteBalanceCast(kelvin: 6500).isNeutral)
    }
}
