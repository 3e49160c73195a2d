import Dispatch
import Foundation
import Testing

@testable import GStreamer

@Suite struct GStreamerTests {
    @Test func initializesAndReportsVersion() throws {
        try GStreamer.initialize()
        #expect(GStreamer.version.hasPrefix("1."))
    }

    @Test func missingElementIsTypedError() {
        #expect(throws: GStreamerError.elementNotFound(factory: "no-such-element")) {
            _ = try Element.make("no-such-element")
        }
    }

    @Test func parseBinReportsErrors() {
        #expect(throws: GStreamerError.self) {
            _ = try Bin.parse("videotestsrc ! no-such-element", name: "b")
        }
    }

    @Test func propertiesRoundTripAsStrings() throws {
        let source = try Element.make("videotestsrc", name: "src")
        try source.set("pattern", "ball")
        #expect(source.string("pattern") == "ball")
        try source.set("is-live", "true")
        #expect(source.int("is-live") == 1)
        #expect(throws: GStreamerError.noSuchProperty(element: "src", property: "nope")) {
            try source.set("nope", "1")
        }
    }

    @Test func objectPropertiesTakeObjectsOfTheirType() throws {
        let player = try Element.make("playbin", name: "player")
        let sink = try Element.make("fakesink", name: "vf")
        try player.set("video-sink", object: sink)
        #expect(throws: GStreamerError.noSuchProperty(element: "player", property: "nope")) {
            try player.set("nope", object: sink)
        }
        let pad = try #require(sink.staticPad("sink"))
        #expect(throws: GStreamerError.propertyTypeMismatch(element: "player", property: "video-sink", value: "GstPad")) {
            try player.set("video-sink", object: pad)
        }
    }

    @Test func structureParserKeepsTypesAndPosition() throws {
        let text = "output, name=photo, kind=photo, quality=(int)90, size=\"640x480\"; trailing"
        let parsed = try #require(Structure.parse(text))
        #expect(parsed.structure.name == "output")
        #expect(parsed.structure.string("name") == "photo")
        #expect(parsed.structure.int("quality") == 90)
        #expect(parsed.structure.fieldNames == ["name", "kind", "quality", "size"])
    }

    @Test func capsStructures() throws {
        let caps = try Caps("video/x-raw,width=640,height=480,framerate=30/1")
        let first = try #require(caps.structures.first)
        #expect(first.int("width") == 640)
        #expect(first.fraction("framerate")! == (30, 1))
    }
}

@Suite struct OwnershipTests {
    /// A bus sync handler owns each message it drops: a leaked message would keep the pipeline alive.
    @Test func busSyncHandlerReleasesMessages() throws {
        let pipeline = try Pipeline.make(name: "owned")
        let bus = pipeline.bus
        let seen = Counter()
        let ended = DispatchSemaphore(value: 0)
        bus.setSyncHandler { message in
            seen.add()
            if message.kind == .eos { ended.signal() }
        }
        try pipeline.add(try Bin.parse("videotestsrc num-buffers=3 ! fakesink", name: "b"))
        try pipeline.setState(.playing)
        // The end of stream is the last message the three buffers bring (bounded: a hang fails).
        #expect(ended.wait(timeout: .now() + 30) == .success)
        try pipeline.setState(.null)
        bus.setFlushing(true)
        bus.removeSyncHandler()
        #expect(seen.value > 5)
        #expect(pipeline.pointer.pointee.object.ref_count == 1, "only our own reference is left")
    }

    @Test func fullReferencesAreNotSunkTwice() throws {
        let monitor = try DeviceMonitor.make(classes: ["Video/Source"])
        #expect(monitor.pointer.pointee.object.ref_count == 1)
        let element = try Element.make("fakesink")
        #expect(element.pointer.pointee.object.ref_count == 1)
    }
}

final class Counter: @unchecked Sendable {
    // NSLock guards `count`.
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
