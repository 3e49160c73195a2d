import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// lockForConfiguration and the setters on described devices: the lock, misuse of it, what reaches
/// the device, a device that refuses or vanishes.
@Suite struct DeviceConfigurationTests {
    typealias D = DescribedDevices

    @Test func theLockIsExclusiveAndNamesItsHolder() throws {
        let (device, _) = D.device("fake:lock", D.webcam)
        try device.lockForConfiguration(holder: "the camera manager")
        #expect(device.configurationLockHolder == "the camera manager")
        // Another handle on the same device (a copy made from its id) shares the lock.
        let other = CaptureDevice(uniqueID: device.uniqueID, localizedName: "again", mediaType: .video, formats: [], kind: device.kind)
        #expect(throws: CaptureError.deviceLocked(device: "fake:lock", holder: "the camera manager")) {
            try other.lockForConfiguration(holder: "another session")
        }
        device.unlockForConfiguration()
        #expect(device.configurationLockHolder == nil)
        try other.lockForConfiguration()
        #expect(other.configurationLockHolder?.hasPrefix("CaptureTests/DeviceConfigurationTests.swift:") == true)
        other.unlockForConfiguration()
        other.unlockForConfiguration()  // unlocking what is not locked does nothing
    }

    @Test func changingWithoutTheLockIsATypedErrorAndWritesNothing() throws {
        let (device, backend) = D.device("fake:unlocked", D.webcam)
        #expect(throws: CaptureError.deviceNotLocked(device: "fake:unlocked", control: "focus-mode=continuous")) {
            try device.setFocusMode(.continuousAutoFocus)
        }
        #expect(throws: CaptureError.deviceNotLocked(device: "fake:unlocked", control: "brightness")) {
            try device.setValue("200", forControl: "brightness")
        }
        #expect(throws: CaptureError.deviceNotLocked(device: "fake:unlocked", control: "zoom=2")) { try device.setVideoZoomFactor(2) }
        #expect(backend.writes.isEmpty)
        // Reading needs no lock.
        #expect(device.focusMode == .continuousAutoFocus)
        #expect(try device.value(ofControl: "brightness") == 128)
    }

    @Test func theSettersWriteTheMappedControlsInOrder() throws {
        let (device, backend) = D.device("fake:setters", D.webcam)
        try device.lockForConfiguration(holder: "test")
        defer { device.unlockForConfiguration() }
        #expect(device.isFocusModeSupported(.continuousAutoFocus) && !device.isFocusPointOfInterestSupported)
        #expect(!device.hasTorch && !device.hasFlash && device.isLowLightBoostSupported)
        try device.setFocusModeLocked(lensPosition: 0.2)
        try device.setExposureModeCustom(duration: .milliseconds(20), gain: 30)
        try device.setWhiteBalanceTemperature(3000)
        try device.setAutomaticallyEnablesLowLightBoostWhenAvailable(true)
        try device.setVideoZoomFactor(2.5)
        try device.setValue("50 Hz", forControl: "power_line_frequency")
        try device.setValue(90, forControl: "brightness")
        #expect(
            backend.writes == [
                "focus_automatic_continuous=0", "focus_absolute=200",
                "auto_exposure=1", "exposure_time_absolute=200", "gain=30",
                "white_balance_automatic=0", "white_balance_temperature=3000",
                "exposure_dynamic_framerate=1", "zoom_absolute=250", "power_line_frequency=1", "brightness=90",
            ])
        // The getters read the device back.
        #expect(device.focusMode == .locked)
        #expect(device.lensPosition == 0.2)
        #expect(device.exposureMode == .custom)
        #expect(device.exposureDuration == .milliseconds(20))
        #expect(device.gain == 30)
        #expect(device.whiteBalanceMode == .locked && device.whiteBalanceTemperature == 3000)
        #expect(device.automaticallyEnablesLowLightBoostWhenAvailable)
        #expect(device.videoZoomFactor == 2.5 && device.maxAvailableVideoZoomFactor == 5)
        // Nothing streams the device here: a change has no first frame to report.
        let change = try device.setExposureMode(.continuousAutoExposure)
        #expect(!change.isStreaming)
        #expect(device.exposureMode == .continuousAutoExposure)
    }

    @Test func theSensorsTorchFlashAndPointsOfInterest() async throws {
        let (device, backend) = D.device("fake:sensor", D.sensor)
        try device.lockForConfiguration(holder: "test")
        defer { device.unlockForConfiguration() }
        #expect(device.hasTorch && device.hasFlash && device.isTorchModeSupported(.on) && !device.isTorchModeSupported(.auto))
        try device.setTorchModeOn(level: 0.8)
        #expect(device.torchMode == .on && device.torchLevel == 0.8)
        try device.setTorchMode(.off)
        try device.setFlashMode(.auto)
        #expect(device.flashMode == .auto)
        try device.setFocusPointOfInterest(NormalizedPoint(x: 0.25, y: 0.25))
        #expect(device.focusPointOfInterest == NormalizedPoint(x: 0.25, y: 0.25))
        try device.setExposureTargetBias(-1)
        #expect(device.exposureTargetBias == -1 && device.minExposureTargetBias == -2 && device.maxExposureTargetBias == 2)
        #expect(
            backend.writes == [
                "led_mode=2", "torch_intensity=80", "led_mode=0",
                "region_of_interest_rectangle=80x60@120,90", "region_of_interest_auto_ctrls=8", "auto_exposure_bias=1",
            ])
    }

    /// The one-shot modes of a device without a one-shot trigger run the automatic mode, report
    /// themselves while it settles, then lock.
    @Test func aOneShotModeSettlesThenLocks() async throws {
        let (device, backend) = D.device("fake:one-shot", D.webcam)
        try device.lockForConfiguration(holder: "test")
        defer { device.unlockForConfiguration() }
        let started = ContinuousClock.now
        try device.setFocusMode(.autoFocus)
        #expect(device.focusMode == .autoFocus)
        #expect(backend.writes == ["focus_automatic_continuous=1"])
        // The lock comes once the settle time has passed (later on a busy machine: waited for, bounded).
        #expect(await waitUntil(timeout: .seconds(15)) { backend.writes.count >= 2 })
        #expect(ContinuousClock.now - started >= ControlMapping.settleTime)
        #expect(backend.writes == ["focus_automatic_continuous=1", "focus_automatic_continuous=0"])
        #expect(device.focusMode == .locked)
        // A request of the same feature meanwhile wins: the pending lock is dropped.
        try device.setWhiteBalanceMode(.autoWhiteBalance)
        try device.setWhiteBalanceMode(.continuousAutoWhiteBalance)
        // A one-shot focus asked after them settles and locks later than the dropped lock would have:
        // once its lock is written, the white balance's would have been too.
        try device.setFocusMode(.autoFocus)
        #expect(await waitUntil(timeout: .seconds(15)) { backend.writes.filter { $0 == "focus_automatic_continuous=0" }.count == 2 })
        #expect(!backend.writes.contains("white_balance_automatic=0"))
        #expect(Array(backend.writes.suffix(4).prefix(2)) == ["white_balance_automatic=1", "white_balance_automatic=1"])
        #expect(device.whiteBalanceMode == .continuousAutoWhiteBalance)
    }

    @Test func badInputIsATypedErrorNamingTheDeviceAndTheControl() throws {
        let (device, backend) = D.device("fake:bad", D.vivid)
        try device.lockForConfiguration(holder: "test")
        defer { device.unlockForConfiguration() }
        #expect(
            throws: CaptureError.unknownControl(
                device: "fake:bad", control: "sharpness",
                known: ["brightness", "contrast", "saturation", "hue", "gain_automatic", "gain", "horizontal_flip", "vertical_flip"])
        ) {
            try device.setValue(1, forControl: "sharpness")
        }
        #expect(throws: CaptureError.controlOutOfRange(device: "fake:bad", control: "hue", value: "200", range: "-128 to 128")) {
            try device.setValue(200, forControl: "hue")
        }
        #expect(
            throws: CaptureError.controlNotSupported(
                device: "fake:bad", control: "focus-mode=continuous", reason: "it has no focus_automatic_continuous control")
        ) {
            try device.setFocusMode(.continuousAutoFocus)
        }
        #expect(throws: CaptureError.flashNotSupported(device: "fake:bad")) { try device.setFlashMode(.on) }
        backend.refuse(V4L2Control.brightness, with: EBUSY)
        do {
            try device.setValue(10, forControl: "brightness")
            Issue.record("a refused write succeeded")
        } catch {
            #expect(error.name == "control-failed")
            #expect(error.description.hasPrefix("the device 'fake:bad' did not take brightness: the control is busy"))
        }
        #expect(backend.writes.isEmpty)
    }

    /// A camera that goes away while locked: every setter is a typed error naming it and what was set;
    /// the getters fall back to what nothing says.
    @Test func aCameraThatVanishesWhileLocked() throws {
        let (device, backend) = D.device("fake:vanishing", D.webcam)
        try device.lockForConfiguration(holder: "test")
        defer { device.unlockForConfiguration() }
        try device.setValue(100, forControl: "brightness")
        backend.vanish()
        do {
            try device.setValue(110, forControl: "brightness")
            Issue.record("a write to a vanished device succeeded")
        } catch {
            #expect(
                error
                    == .controlFailed(
                        device: "fake:vanishing", control: "brightness=110",
                        reason: "the device was disconnected (No such device (errno 19))"))
        }
        #expect(throws: CaptureError.self) { try device.setFocusMode(.locked) }
        #expect(throws: CaptureError.self) { try device.currentControls() }
        #expect(!device.isFocusModeSupported(.locked))
        #expect(device.configurationLockHolder == "test")
    }
}
