import CaptureTestSupport
import Foundation
import GStreamer
import Testing

@testable import Capture

/// The H.264 encoder choice. This machine has no hardware encoder, so the fallback is what runs; the
/// trial encode itself is checked on the software encoders and on one that makes no H.264.
@Suite(.serialized) struct EncoderChoiceTests {
    @Test func theAutomaticChoiceTakesAWorkingHardwareEncoderElseX264() throws {
        try GStreamer.initialize()
        let selection = H264EncoderSelection.current
        #expect(selection.findings.map(\.encoder) == H264Encoder.allCases)
        for (encoder, finding) in selection.findings where encoder.isHardware && !GStreamer.hasElement(encoder.rawValue) {
            #expect(finding == "not installed", "\(encoder)")
        }
        let workingHardware = selection.findings.first { $0.encoder.isHardware && $0.finding == "works" }?.encoder
        #expect(selection.encoder == (workingHardware ?? .x264enc))
        #expect(selection.description.hasPrefix("\(selection.encoder?.rawValue ?? "") ("))
    }

    @Test func theTrialEncodeNeedsH264OutOfTheEncoder() throws {
        try GStreamer.initialize()
        #expect(H264EncoderSelection.trialEncode("x264enc", format: "I420") == nil)
        #expect(H264EncoderSelection.trialEncode("openh264enc", format: "I420") == nil)
        // An encoder that works but makes JPEG fails the trial.
        #expect(H264EncoderSelection.trialEncode("jpegenc", format: "I420") == "it made no H.264")
        #expect(H264EncoderSelection.trialEncode("no-such-encoder", format: "I420") != nil)
    }

    @Test func aForcedEncoderIsUsedAndAMissingOneIsATypedError() async throws {
        let folder = try TemporaryDirectory()
        let session = CaptureSession(name: "encoders")
        try session.addInput(CaptureDeviceInput(deviceID: "test-pattern"))
        try session.setSessionPreset(.cif352x288)
        var settings = MovieSettings()
        settings.encoder = .named(.openh264enc)
        let movie = CaptureMovieFileOutput(name: "movie", settings: settings)
        try session.addOutput(movie)
        try await session.startRunning()
        try await movie.startRecording(to: folder.path("open.mp4"))
        #expect(movie.handleState.value?.element("movie_encode")?.factoryName == "openh264enc")
        #expect(await movie.waitUntilRecorded(.seconds(1)))
        let result = try await movie.stopRecording()
        #expect(result.success)
        let probed = try ProbedMovie(result.location, countFrames: true)
        #expect(probed.video?.codec_name == "h264")
        #expect((Int(probed.video?.nb_read_frames ?? "") ?? 0) >= 20)

        movie.settings.encoder = .named(.vah264enc)
        if !GStreamer.hasElement("vah264enc") {
            await #expect {
                try await movie.startRecording(to: folder.path("va.mp4"))
            } throws: { error in
                guard let error = error as? CaptureError, case .elementMissing(let factory, _) = error else { return false }
                return factory == "vah264enc"
            }
        }
        await session.stopRunning()
    }
}
