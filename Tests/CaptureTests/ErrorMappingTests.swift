import CGStreamer
import Foundation
import GStreamer
import Testing

@testable import Capture

/// GStreamer reports device trouble as bus errors; the engine must turn them into the typed errors
/// users handle. These tests post the errors v4l2src posts, from an element inside an input's bin.
@Suite struct ErrorMappingTests {
    /// An executor with an input named "camera" whose source is a fakesrc.
    func cameraInput() throws -> (engine: PipelineExecutor, source: Element) {
        let engine = try PipelineExecutor(name: "mapping", post: { _ in }, incident: { _ in })
        let bin = try Bin.empty(name: "input-camera")
        let source = try Element.make("fakesrc", name: "camera_source")
        try bin.add(source)
        try engine.pipeline.add(bin)
        engine.router.register(bin, for: .input("camera"))
        return (engine, source)
    }

    /// An error message as `source` would post it (with details when given; they are taken).
    func errorMessage(
        from source: Element, domain: GQuark, code: Int32, message: String, debug: String,
        details: UnsafeMutablePointer<GstStructure>? = nil
    ) -> Message {
        let error = g_error_new_literal(domain, code, message)
        defer { g_error_free(error) }
        let raw = details.map { gst_message_new_error_with_details(source.pointer, error, debug, $0)! } ?? gst_message_new_error(source.pointer, error, debug)!
        let wrapped = Message(borrowing: raw)
        gst_mini_object_unref(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstMiniObject.self))
        return wrapped
    }

    func posted(domain: GQuark, code: Int32, message: String, debug: String) throws -> (engine: PipelineExecutor, message: Message) {
        let (engine, source) = try cameraInput()
        return (engine, errorMessage(from: source, domain: domain, code: code, message: message, debug: debug))
    }

    func mapped(domain: GQuark, code: Int32, message: String, debug: String) throws -> CaptureError {
        let (engine, message) = try posted(domain: domain, code: code, message: message, debug: debug)
        return engine.captureError(for: message)
    }

    func meansDisconnection(code: GstResourceError, debug: String, devicePresent: Bool? = nil) throws -> Bool {
        let (_, message) = try posted(
            domain: gst_resource_error_quark(), code: Int32(code.rawValue),
            message: "Could not read from resource.", debug: debug)
        return ErrorMapper.meansDisconnection(try #require(message.error), devicePresent: devicePresent)
    }

    @Test func busyDevice() throws {
        let error = try mapped(
            domain: gst_resource_error_quark(), code: Int32(GST_RESOURCE_ERROR_BUSY.rawValue),
            message: "Device '/dev/video0' is busy", debug: "gstv4l2object.c: ...")
        guard case .deviceBusy(let id, _) = error else { Issue.record("\(error)"); return }
        #expect(id == "camera_source" || id == "camera")
        #expect(error.name == "device-busy")
    }

    @Test func permissionDenied() throws {
        let error = try mapped(
            domain: gst_resource_error_quark(), code: Int32(GST_RESOURCE_ERROR_OPEN_READ_WRITE.rawValue),
            message: "Could not open device '/dev/video0' for reading and writing.",
            debug: "system error: Permission denied")
        #expect(error.name == "permission-denied")
    }

    @Test func notNegotiated() throws {
        let error = try mapped(
            domain: gst_stream_error_quark(), code: Int32(GST_STREAM_ERROR_FAILED.rawValue),
            message: "Internal data stream error.", debug: "streaming stopped, reason not-negotiated (-4)")
        #expect(error == .formatNotNegotiated(input: "camera", detail: "Internal data stream error."))
    }

    /// GStreamer adds the flow return to the details of a stream that stopped: "not negotiated" is read
    /// from there, whatever the debug text says.
    @Test func notNegotiatedFromTheFlowReturnInTheDetails() throws {
        let (engine, source) = try cameraInput()
        let details = gst_structure_new_empty("details")!
        var value = GValue()
        g_value_init(&value, gst_flow_return_get_type())
        g_value_set_enum(&value, GST_FLOW_NOT_NEGOTIATED.rawValue)
        gst_structure_take_value(details, "flow-return", &value)
        let message = errorMessage(
            from: source, domain: gst_stream_error_quark(), code: Int32(GST_STREAM_ERROR_FAILED.rawValue),
            message: "Internal data stream error.", debug: "streaming stopped", details: details)
        #expect(message.error?.flowReturn == BusError.flowNotNegotiated)
        #expect(engine.captureError(for: message) == .formatNotNegotiated(input: "camera", detail: "Internal data stream error."))
    }

    /// An error of an element that is in no input or output names the element.
    @Test func anErrorOutsideEveryPartNamesItsElement() throws {
        let engine = try PipelineExecutor(name: "mapping", post: { _ in }, incident: { _ in })
        let tee = try Element.make("tee", name: "camera_tee")
        try engine.pipeline.add(tee)
        let message = errorMessage(
            from: tee, domain: gst_resource_error_quark(), code: Int32(GST_RESOURCE_ERROR_BUSY.rawValue),
            message: "busy", debug: "debug")
        #expect(engine.router.owner(of: message) == nil)
        #expect(engine.captureError(for: message) == .deviceBusy(id: "camera_tee", detail: "busy"))
    }

    /// vivid's inject_vidioc_streamon_error, as v4l2src reports it (seen in the hardware tier).
    @Test func aDriverThatWillNotStreamIsADeviceStartFailure() throws {
        let error = try mapped(
            domain: gst_resource_error_quark(), code: Int32(GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue),
            message: "Failed to allocate required memory.",
            debug: "../sys/v4l2/gstv4l2src.c(976): gst_v4l2src_decide_allocation (): /GstPipeline:p/GstV4l2Src:camera_source:\nBuffer pool activation failed")
        guard case .deviceStartFailed(let id, let detail) = error else { Issue.record("\(error)"); return }
        #expect(id == "camera_source" || id == "camera")
        #expect(detail.contains("refused to start streaming"))
        #expect(error.name == "device-start-failed")
    }

    @Test func otherErrorsNameTheElement() throws {
        let error = try mapped(
            domain: gst_resource_error_quark(), code: Int32(GST_RESOURCE_ERROR_READ.rawValue),
            message: "Could not read from resource.", debug: "poll error 1: Invalid argument (22)")
        guard case .streamingFailed(let element, let message, _) = error else { Issue.record("\(error)"); return }
        #expect(element.contains("camera_source"))
        #expect(message == "Could not read from resource. (Invalid argument)")
    }

    /// An unplugged camera or a driver-side disconnect interrupts the session as `device-disconnected`,
    /// a failure of a device that is still there as `device-error`. A V4L2 node is asked whether it is
    /// there (v4l2src writes the same text for both on vivid, see the hardware tier); other sources are
    /// judged by the system error.
    @Test func readErrorsTellADisconnectionFromAFailure() throws {
        let trace = "../sys/v4l2/gstv4l2src.c(1221): gst_v4l2src_create (): /GstPipeline:p/GstBin:input-camera/GstV4l2Src:camera_source:\n"
        let poll = trace + "poll error 1: Invalid argument (22)"
        #expect(try meansDisconnection(code: GST_RESOURCE_ERROR_READ, debug: poll, devicePresent: false))
        #expect(try !meansDisconnection(code: GST_RESOURCE_ERROR_READ, debug: poll, devicePresent: true))
        #expect(!DeviceControl.isPresent(devicePath: "/dev/video-that-does-not-exist"))
        #expect(try meansDisconnection(code: GST_RESOURCE_ERROR_READ, debug: trace + "poll error 1: Invalid argument (22)"))
        #expect(try meansDisconnection(code: GST_RESOURCE_ERROR_READ, debug: trace + "poll error 1: No such device (19)"))
        #expect(try !meansDisconnection(code: GST_RESOURCE_ERROR_READ, debug: trace + "poll error 1: Input/output error (5)"))
        #expect(try meansDisconnection(code: GST_RESOURCE_ERROR_NOT_FOUND, debug: "no trace"))
        #expect(try !meansDisconnection(code: GST_RESOURCE_ERROR_WRITE, debug: trace + "No such device (19)"))
        let (_, message) = try posted(
            domain: gst_resource_error_quark(), code: Int32(GST_RESOURCE_ERROR_READ.rawValue),
            message: "Could not read from resource.", debug: trace + "poll error 1: Input/output error (5)")
        let system = try #require(message.error?.systemError)
        #expect(system.number == 5 && system.text == "Input/output error")
    }

    @Test func frameSequenceGapsCountMissingFrames() {
        #expect(FrameSequence.missing(previous: 7, current: 8) == 0)
        #expect(FrameSequence.missing(previous: 7, current: 10) == 2)
        #expect(FrameSequence.missing(previous: UInt64.max, current: 0) == nil)  // the first buffer
        #expect(FrameSequence.missing(previous: 3, current: UInt64.max) == nil)  // no sequence number
        #expect(FrameSequence.missing(previous: 500, current: 0) == nil)  // a restarted stream
        #expect(FrameSequence.missing(previous: 0, current: 5_000_000) == nil)  // not a frame counter
    }
}

/// What is left of a V4L2 node that vanished under the session (GStreamer 1.22's v4l2src keeps its
/// buffer pool's descriptor open after a stop on an unplugged camera) is let go: each descriptor on the
/// removed node is pointed at /dev/null, its number kept; descriptors on anything else are untouched.
/// A removed file stands in for the removed node here; the vivid tier unbinds a real one.
@Suite struct VanishedNodeTests {
    private func target(of fd: Int32) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
    }

    @Test func descriptorsOnTheRemovedNodeAreLetGoAndTheirNumbersKept() throws {
        let directory = try TemporaryDirectory()
        let node = directory.path("video7")
        let other = directory.path("video8")
        for path in [node, other] { _ = FileManager.default.createFile(atPath: path, contents: Data([1])) }
        let held = [open(node, O_RDONLY | O_CLOEXEC), open(node, O_RDONLY | O_CLOEXEC)]
        let kept = open(other, O_RDONLY | O_CLOEXEC)
        defer { for fd in held + [kept] where fd >= 0 { close(fd) } }
        try #require(held.allSatisfy { $0 >= 0 } && kept >= 0)
        // Nothing is let go while the node is there.
        #expect(DeviceControl.releaseVanished(devicePath: node) == 0)
        #expect(held.allSatisfy { target(of: $0) == node })
        unlink(node)
        unlink(other)
        #expect(target(of: held[0]) == "\(node) (deleted)")
        #expect(DeviceControl.releaseVanished(devicePath: node) == 2)
        for fd in held {
            #expect(target(of: fd) == "/dev/null", "descriptor \(fd)")
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "descriptor \(fd) stays close-on-exec")
        }
        #expect(target(of: kept) == "\(other) (deleted)", "another removed file is not touched")
        #expect(DeviceControl.releaseVanished(devicePath: node) == 0)
    }
}
