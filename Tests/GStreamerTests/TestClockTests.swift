import Dispatch
import GStreamer
import Testing

/// Time under the test's control: a live source on a `TestClock` makes the frames of the time the test
/// gives, exactly, whatever the load of the machine.
@Suite struct TestClockTests {
    /// 700 ms of a 30 fps live source are 22 frames (0 to 700 ms); 300 ms more are 9 more. The count is
    /// read when the source waits for the next frame's time: the frames before it were all pushed (one
    /// streaming thread, no queue between the source and the sink).
    @Test func aLiveSourceMakesExactlyTheFramesOfTheTimeGiven() throws {
        let clock = try TestClock.make()
        let pipeline = try Pipeline.make(name: "clocked")
        try pipeline.add(try Bin.parse("videotestsrc is-live=true ! video/x-raw,width=64,height=48,framerate=30/1 ! appsink name=frames sync=false", name: "b"))
        let frames = Counter()
        let sink = try #require(pipeline.child(named: "frames"))
        sink.setAppSinkCallbacks(onSample: { _ in frames.add() })
        pipeline.use(clock)
        _ = try pipeline.setState(.playing)
        defer { _ = try? pipeline.setState(.null) }

        #expect(clock.advance(to: 700_000_000) == 22)
        #expect(clock.waitForWait() == 733_333_333, "the source waits for the frame after 700 ms")
        #expect(frames.value == 22)
        #expect(clock.advance(by: .milliseconds(300)) == 9)
        #expect(clock.waitForWait() == 1_033_333_333)
        #expect(frames.value == 31)
        // Nothing moves while the clock stands: the source still waits for the same frame.
        #expect(clock.waitForWait() == 1_033_333_333 && frames.value == 31)
        #expect(clock.time == 1_000_000_000)
    }

    /// One crank releases one wait: one frame.
    @Test func eachCrankIsOneFrame() throws {
        let clock = try TestClock.make()
        let pipeline = try Pipeline.make(name: "cranked")
        try pipeline.add(try Bin.parse("videotestsrc is-live=true ! video/x-raw,width=64,height=48,framerate=25/1 ! appsink name=frames sync=false", name: "b"))
        let frames = Counter()
        try #require(pipeline.child(named: "frames")).setAppSinkCallbacks(onSample: { _ in frames.add() })
        pipeline.use(clock)
        _ = try pipeline.setState(.playing)
        defer { _ = try? pipeline.setState(.null) }
        #expect(clock.waitForWait() == 0)  // the first frame's
        for _ in 0..<10 { clock.crank() }
        #expect(clock.waitForWait() == 400_000_000)
        #expect(frames.value == 10 && clock.time == 360_000_000)
    }
}
