import Foundation
import Testing

@testable import Capture

/// The compiler is pure: the encoder choice and which devices the session controls are inputs
/// (`CompileEnvironment`), so these compilations describe machines other than this one and never run
/// the encoder trials nor ask the device control hub.
@Suite struct CompileEnvironmentTests {
    static func environment(
        encoder: H264Encoder?, installed: Set<H264Encoder>, controllable: Bool = true
    ) -> CompileEnvironment {
        CompileEnvironment(encoders: H264EncoderSelection(encoder: encoder, installed: installed), isControllable: { _ in controllable })
    }

    static func configuration(_ outputs: [CaptureOutput]) throws -> SessionConfiguration {
        SessionConfiguration(preset: .cif352x288, inputs: [try CaptureDeviceInput(deviceID: "test-pattern", name: "camera")], outputs: outputs)
    }

    static func preRollMovie(encoder: H264EncoderPreference = .automatic) -> CaptureMovieFileOutput {
        var settings = MovieSettings()
        settings.preRoll = .seconds(1)
        settings.encoder = encoder
        return CaptureMovieFileOutput(name: "movie", settings: settings)
    }

    @Test func withoutAnyH264EncoderAStreamAndAPreRollAreRefusedAsMissingX264() throws {
        let none = Self.environment(encoder: nil, installed: [])
        for output in [try CaptureStreamOutput(name: "live", serve: "rtsp://127.0.0.1:8554/live"), Self.preRollMovie()] as [CaptureOutput] {
            #expect {
                try GraphCompiler.compile(try Self.configuration([output]), environment: none)
            } throws: { error in
                guard let error = error as? CaptureError, case .elementMissing(let factory, _) = error else { return false }
                return factory == "x264enc"
            }
        }
    }

    @Test func theEncoderTheEnvironmentChoseIsTheOneCompiled() throws {
        let openH264 = Self.environment(encoder: .openh264enc, installed: [.openh264enc])
        let stream = try CaptureStreamOutput(name: "live", serve: "rtsp://127.0.0.1:8554/live")
        let graph = try GraphCompiler.compile(try Self.configuration([stream, Self.preRollMovie()]), environment: openH264).graph
        let factories = graph.branches.flatMap { $0.chains.flatMap { $0.elements.map(\.factory) } }
        #expect(factories.filter { $0 == "openh264enc" }.count == 2)
        #expect(!factories.contains("x264enc"))
    }

    @Test func aNamedEncoderMustBeAmongTheInstalledOnes() throws {
        let softwareOnly = Self.environment(encoder: .x264enc, installed: [.x264enc])
        #expect {
            try GraphCompiler.compile(try Self.configuration([Self.preRollMovie(encoder: .named(.vah264enc))]), environment: softwareOnly)
        } throws: { error in
            guard let error = error as? CaptureError, case .elementMissing(let factory, _) = error else { return false }
            return factory == "vah264enc"
        }
        let graph = try GraphCompiler.compile(try Self.configuration([Self.preRollMovie(encoder: .named(.x264enc))]), environment: softwareOnly).graph
        #expect(graph.branches.flatMap { $0.chains.flatMap { $0.elements.map(\.factory) } }.contains("x264enc"))
    }

    @Test func onlyAControllableDeviceGetsTheControlStages() throws {
        let stages = [SourceStages.balance("camera"), SourceStages.whiteBalance("camera"), SourceStages.zoom("camera"), SourceStages.zoomSize("camera")]
        for controllable in [true, false] {
            let environment = Self.environment(encoder: .x264enc, installed: [.x264enc], controllable: controllable)
            let source = try #require(try GraphCompiler.compile(try Self.configuration([]), environment: environment).graph.sources.first)
            let names = Set(source.elements.map(\.name))
            #expect(stages.allSatisfy(names.contains) == controllable, "controllable: \(controllable)")
            #expect(stages.contains(where: names.contains) == controllable, "controllable: \(controllable)")
        }
    }

    @Test func callersThatComeWhileTheValueIsComputedWaitForItsOneComputation() {
        let once = ComputedOnce<Int>()
        let runs = Locked(0)
        let callers = 8
        let arrived = DispatchSemaphore(value: 0)
        let results = Locked<[Int]>([])
        let done = DispatchGroup()
        for _ in 0..<callers {
            done.enter()
            // Threads of their own: each caller blocks (the computing one, and those waiting for it).
            Thread.detachNewThread {
                arrived.signal()
                let value = once.value {
                    runs.withLock { $0 += 1 }
                    // The computation lasts until every caller has come.
                    for _ in 0..<callers { arrived.wait() }
                    return 42
                }
                results.withLock { $0.append(value) }
                done.leave()
            }
        }
        done.wait()
        #expect(runs.value == 1)
        #expect(results.value == Array(repeating: 42, count: callers))
    }

    @Test func aResultNotKeptIsComputedAgainByTheNextCaller() {
        let once = ComputedOnce<Int>()
        let runs = Locked(0)
        let make = {
            runs.withLock {
                $0 += 1; return $0
            }
        }
        #expect(once.value(make, keep: { _ in false }) == 1)
        #expect(once.value(make) == 2)
        #expect(once.value(make) == 2)
    }
}
