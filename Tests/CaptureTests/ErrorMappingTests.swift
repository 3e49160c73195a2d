import CGStreamer
import Foundation
import GStreamer
import Testing
@testable import Capture

/// GStreamer reports device trouble as bus errors; the engine must turn them into the typed errors
/// users handle. These tests post the errors v4l2src posts, from an element inside an input's bin.
@Suite struct ErrorMappingTests {
    func mapped(domain: GQuark, code: Int32, message: String, debug: String) throws -> CaptureError {
        let engine = try PipelineEngine(name: "mapping", post: { _ in }, incident: { _ in })
        let bin = try Bin.empty(name: "input-camera")
        let source = try Element.make("fakesrc", name: "camera_source")
        try bin.add(source)
        try engine.pipeline.add(bin)
        let error = g_error_new_literal(domain, code, message)
        defer { g_error_free(error) }
        let raw = gst_message_new_error(source.pointer, error, debug)!
        let wrapped = Message(borrowing: raw)
        gst_mini_object_unref(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstMiniObject.self))
        return engine.captureError(for: wrapped)
    }

    @Test func busyDevice() throws {
        let error = try mapped(domain: gst_resource_error_quark(), code: Int32(GST_RESOURCE_ERROR_BUSY.rawValue),
                               message: "Device '/dev/video0' is busy", debug: "gstv4l2object.c: ...")
        guard case .deviceBusy(let id, _) = error else { Issue.record("\(error)"); return }
        #expect(id == "camera_source" || id == "camera")
        #expect(error.name == "device-busy")
    }

    @Test func permissionDenied() throws {
        let error = try mapped(domain: gst_resource_error_quark(), code: Int32(GST_RESOURCE_ERROR_OPEN_READ_WRITE.rawValue),
                               message: "Could not open device '/dev/video0' for reading and writing.",
                               debug: "system error: Permission denied")
        #expect(error.name == "permission-denied")
    }

    @Test func notNegotiated() throws {
        let error = try mapped(domain: gst_stream_error_quark(), code: Int32(GST_STREAM_ERROR_FAILED.rawValue),
                               message: "Internal data stream error.", debug: "streaming stopped, reason not-negotiated (-4)")
        #expect(error == .formatNotNegotiated(input: "camera", detail: "Internal data stream error."))
    }

    @Test func otherErrorsNameTheElement() throws {
        let error = try mapped(domain: gst_resource_error_quark(), code: Int32(GST_RESOURCE_ERROR_READ.rawValue),
                               message: "Could not read from resource.", debug: "poll error 1: Invalid argument (22)")
        guard case .streamingFailed(let element, let message, _) = error else { Issue.record("\(error)"); return }
        #expect(element.contains("camera_source"))
        #expect(message == "Could not read from resource.")
    }
}
