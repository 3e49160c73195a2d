import Foundation
import Locking
import Testing

@testable import GStreamer

/// Waits for `semaphore` (a bounded wait for an event); true when it came.
private func arrived(_ semaphore: DispatchSemaphore, within seconds: Double = 10) -> Bool {
    semaphore.wait(timeout: .now() + seconds) == .success
}

/// Stops a pipeline whose bus has a sync handler, and removes the handler.
private func stop(_ pipeline: Pipeline) {
    _ = try? pipeline.setState(.null)
    pipeline.bus.setFlushing(true)
    pipeline.bus.removeSyncHandler()
}

/// The bus waits of the wrapper (one registry per bus, answered on the posting thread) and the typed
/// message tests they match with.
@Suite struct BusWaitersTests {
    @Test func aWaiterIsAnsweredOnceByTheMessageItWaitsFor() throws {
        try GStreamer.initialize()
        let pipeline = try Pipeline.make(name: "waits")
        let bin = try Bin.parse("videotestsrc num-buffers=3 ! fakesink", name: "b")
        try pipeline.add(bin)
        let waiters = BusWaiters<String>()
        pipeline.bus.setSyncHandler { waiters.dispatch($0) }
        defer { stop(pipeline) }
        let playing = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let answers = Locked<[String]>([])
        let playingToken = NSObject(), endToken = NSObject()
        waiters.register(for: playingToken, match: { [pipeline] in $0.isStateChange(of: pipeline, to: .playing) ? "playing" : nil }) { answer in
            answers.withLock { $0.append(answer) }
            playing.signal()
        }
        waiters.register(for: endToken, match: { [pipeline] in $0.kind == .eos && $0.isPosted(by: pipeline) ? "eos" : nil }) { answer in
            answers.withLock { $0.append(answer) }
            ended.signal()
        }
        #expect(waiters.count == 2)
        try pipeline.setState(.playing)
        #expect(arrived(playing))
        #expect(arrived(ended))
        #expect(answers.value == ["playing", "eos"])
        #expect(waiters.count == 0)
    }

    @Test func aCancelledWaiterIsNotAnsweredAndCancelAllAnswersEveryOther() throws {
        try GStreamer.initialize()
        let pipeline = try Pipeline.make(name: "cancels")
        try pipeline.add(try Bin.parse("videotestsrc num-buffers=1 ! fakesink", name: "b"))
        let waiters = BusWaiters<String>()
        let answers = Locked<[String]>([])
        let cancelled = NSObject(), first = NSObject(), second = NSObject()
        let anything: @Sendable (Message) -> String? = { _ in "message" }
        waiters.register(for: cancelled, match: anything) { answer in answers.withLock { $0.append("cancelled: \(answer)") } }
        waiters.register(for: first, match: { _ in nil }) { answer in answers.withLock { $0.append("first: \(answer)") } }
        waiters.register(for: second, match: { _ in nil }) { answer in answers.withLock { $0.append("second: \(answer)") } }
        waiters.cancel(cancelled)
        #expect(waiters.count == 2)
        // Every message of a start goes past the two that match nothing: none is answered.
        let ended = DispatchSemaphore(value: 0)
        pipeline.bus.setSyncHandler { message in
            waiters.dispatch(message)
            if message.kind == .eos { ended.signal() }
        }
        defer { stop(pipeline) }
        try pipeline.setState(.playing)
        #expect(arrived(ended))
        #expect(answers.value.isEmpty)
        waiters.cancelAll(answering: "stopped")
        #expect(answers.value == ["first: stopped", "second: stopped"])
        #expect(waiters.count == 0)
    }

    @Test func aForwardedEndOfStreamIsKnownByTheBinThatForwardedIt() throws {
        try GStreamer.initialize()
        let pipeline = try Pipeline.make(name: "forwards")
        let bin = try Bin.parse("videotestsrc num-buffers=2 ! fakesink", name: "writer")
        try bin.set("message-forward", "true")
        try pipeline.add(bin)
        let waiters = BusWaiters<Bool>()
        let finished = DispatchSemaphore(value: 0)
        waiters.register(for: bin, match: { [bin] in $0.isForwardedEndOfStream(from: bin) ? true : nil }) { _ in finished.signal() }
        pipeline.bus.setSyncHandler { waiters.dispatch($0) }
        defer { stop(pipeline) }
        try pipeline.setState(.playing)
        #expect(arrived(finished))
    }
}

/// A pipeline `appsrc name=source ! ... ! appsink name=received`, playing, that notes the
/// presentation time of each sample it receives; stopped when released.
private final class Receiver: Sendable {
    let pipeline: Pipeline
    let source: Element
    let times = Locked<[UInt64?]>([])
    /// Signalled at the third sample received.
    let three = DispatchSemaphore(value: 0)

    init(_ launch: String) throws {
        try GStreamer.initialize()
        pipeline = try Pipeline.make(name: "receiver")
        let bin = try Bin.parse(launch, name: "r")
        try pipeline.add(bin)
        source = try #require(bin.child(named: "source"))
        let received = try #require(bin.child(named: "received"))
        received.setAppSinkCallbacks(onSample: { [times, three] sample in
            let count = times.withLock { times in
                times.append(sample.presentationTime)
                return times.count
            }
            if count == 3 { three.signal() }
        })
        try pipeline.setState(.playing)
    }

    deinit { _ = try? pipeline.setState(.null) }
}

/// Samples handed from one pipeline to another: their times, key-frame flags, the shifted and
/// retimed appsrc pushes, and the key-frame request sent back to the encoder.
@Suite struct SampleTimingTests {
    /// Runs `launch` (ending in an appsink named `sink`) and hands each sample to `body` on the
    /// streaming thread; returns once the appsink saw the end of the stream.
    func samples(_ launch: String, _ body: @escaping @Sendable (SampleView, Element) -> Void) throws -> Bool {
        try GStreamer.initialize()
        let pipeline = try Pipeline.make(name: "samples")
        let bin = try Bin.parse(launch, name: "b")
        try pipeline.add(bin)
        let sink = try #require(bin.child(named: "sink"))
        let ended = DispatchSemaphore(value: 0)
        sink.setAppSinkCallbacks(onSample: { body($0, sink) }, onEOS: { ended.signal() })
        defer { _ = try? pipeline.setState(.null) }
        try pipeline.setState(.playing)
        return arrived(ended)
    }

    @Test func rawFramesAreKeyFramesOnTheirRunningTime() throws {
        let seen = Locked<[(pts: UInt64?, running: UInt64?, key: Bool)]>([])
        #expect(
            try samples("videotestsrc num-buffers=3 ! video/x-raw,framerate=10/1 ! appsink name=sink") { sample, _ in
                seen.withLock { $0.append((sample.presentationTime, sample.runningTime, sample.isKeyFrame)) }
            })
        let frames = seen.value
        #expect(frames.map(\.pts) == [0, 100_000_000, 200_000_000])
        #expect(frames.map(\.running) == frames.map(\.pts))
        #expect(frames.allSatisfy { $0.key })
    }

    @Test func anEncoderMovesItsTimestampsButNotTheRunningTime() throws {
        guard GStreamer.hasElement("x264enc") else { return }
        let seen = Locked<[(pts: UInt64?, running: UInt64?, key: Bool)]>([])
        #expect(
            try samples("videotestsrc num-buffers=4 ! video/x-raw,framerate=10/1 ! x264enc key-int-max=30 tune=zerolatency ! appsink name=sink") {
                sample, _ in seen.withLock { $0.append((sample.presentationTime, sample.runningTime, sample.isKeyFrame)) }
            })
        let frames = seen.value
        #expect(frames.count == 4)
        // x264enc's segment starts 1000 hours in; the running time is the capture's.
        #expect(frames.map(\.running) == [0, 100_000_000, 200_000_000, 300_000_000])
        #expect(frames.allSatisfy { ($0.pts ?? 0) > 3_600_000_000_000 })
        #expect(frames.first?.key == true && frames.contains { !$0.key })
    }

    @Test func aShiftedPushMovesTheTimestampsBack() throws {
        let receiver = try Receiver("appsrc name=source format=time ! appsink name=received sync=false")
        let source = receiver.source
        let pushed = Locked<[Bool]>([])
        #expect(
            try samples("videotestsrc num-buffers=3 ! video/x-raw,framerate=10/1 ! appsink name=sink") { sample, _ in
                // Shifted back by the second frame's time: the first goes to 0, not below.
                let accepted = source.pushSample(sample, shiftedBackBy: 100_000_000)
                pushed.withLock { $0.append(accepted) }
            })
        #expect(arrived(receiver.three))
        #expect(pushed.value == [true, true, true])
        #expect(receiver.times.value == [0, 0, 100_000_000])
    }

    @Test func aRetimedPushSetsItsOffsetOnceAndKeepsTheSpacing() throws {
        let receiver = try Receiver("appsrc name=source format=time is-live=true ! appsink name=received sync=false")
        let source = receiver.source
        let offset = Locked(AppSourceRetiming.unset)
        #expect(
            try samples("videotestsrc num-buffers=3 ! video/x-raw,framerate=10/1 ! appsink name=sink") { sample, _ in
                offset.withLock { source.pushSample(sample, retiming: &$0) }
            })
        #expect(arrived(receiver.three))
        #expect(offset.value != .unset)
        let pts = receiver.times.value.compactMap { $0 }
        #expect(pts.count == 3)
        #expect(zip(pts.dropFirst(), pts).map { $0 - $1 } == [100_000_000, 100_000_000])
    }

    @Test func aKeyFrameRequestReachesTheEncoder() throws {
        guard GStreamer.hasElement("x264enc") else { return }
        // Without requests x264enc makes one key frame in 100; each request makes the next one a key frame.
        let keys = Locked<[Bool]>([])
        let requested = Locked<Bool?>(nil)
        #expect(
            try samples("videotestsrc num-buffers=6 ! video/x-raw,framerate=10/1 ! x264enc key-int-max=100 tune=zerolatency ! appsink name=sink") {
                sample, sink in
                let count = keys.withLock { keys in
                    keys.append(sample.isKeyFrame)
                    return keys.count
                }
                if count == 3, let pad = sink.staticPad("sink") { requested.value = UnownedPad(pad).pushKeyFrameRequest() }
            })
        let frames = keys.value
        #expect(frames.count == 6)
        #expect(requested.value == true)
        #expect(frames.first == true)
        #expect(frames.dropFirst().contains(true))
    }
}
