import CGStreamer
import Foundation

/// What GstDiscoverer reads off a media file.
public struct MediaInfo: Sendable {
    /// The first video stream of the file.
    public struct Video: Sendable {
        /// The frame width in pixels, as stored (before `rotation`).
        public var width: Int
        /// The frame height in pixels, as stored (before `rotation`).
        public var height: Int
        /// The frame rate's numerator (30 in 30/1).
        public var frameRateNumerator: Int
        /// The frame rate's denominator (1 in 30/1, 1001 in 30000/1001).
        public var frameRateDenominator: Int
        /// The name of the stream's caps structure ("video/x-h264", "video/x-vp8" ...), if known.
        public var codec: String?
        /// Clockwise degrees the picture is shown turned by (the stream's `image-orientation` tag:
        /// 0, 90, 180 or 270; mirrored orientations count as their rotation).
        public var rotation: Int = 0
        /// The size as shown, after the rotation.
        public var displaySize: (width: Int, height: Int) { rotation == 90 || rotation == 270 ? (height, width) : (width, height) }
    }
    /// The first audio stream of the file.
    public struct Audio: Sendable {
        /// The sample rate in Hz.
        public var sampleRate: Int
        /// The number of audio channels.
        public var channels: Int
        /// The name of the stream's caps structure ("audio/mpeg", "audio/x-opus" ...), if known.
        public var codec: String?
    }
    /// Duration in nanoseconds.
    public var duration: UInt64
    /// The name of the container's caps structure ("video/quicktime", "video/x-matroska" ...), if known.
    public var container: String?
    /// The first video stream, or nil when the file has none.
    public var video: Video?
    /// The first audio stream, or nil when the file has none.
    public var audio: Audio?
    /// True when the file can be seeked in. The corresponding C function is `gst_discoverer_info_get_seekable`.
    public var isSeekable: Bool

    /// The duration in seconds.
    public var durationSeconds: Double { Double(duration) / 1e9 }

    /// Reads a file's streams. Returns nil when the file cannot be read as media.
    /// The corresponding C function is `gst_discoverer_discover_uri`.
    public static func discover(_ path: String, timeoutSeconds: Double = 10) -> MediaInfo? {
        guard (try? GStreamer.initialize()) != nil else { return nil }
        let uri = URL(fileURLWithPath: path).absoluteString
        var error: UnsafeMutablePointer<GError>?
        guard let discoverer = gst_discoverer_new(GstClockTime(timeoutSeconds * 1e9), &error) else {
            if let error { g_error_free(error) }
            return nil
        }
        defer { g_object_unref(UnsafeMutableRawPointer(discoverer)) }
        let info = gst_discoverer_discover_uri(discoverer, uri, &error)
        if let error { g_error_free(error) }
        guard let info else { return nil }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        guard gst_discoverer_info_get_result(info) == GST_DISCOVERER_OK else { return nil }

        var result = MediaInfo(
            duration: UInt64(gst_discoverer_info_get_duration(info)), container: nil, video: nil, audio: nil,
            isSeekable: gst_discoverer_info_get_seekable(info) != 0)
        if let stream = gst_discoverer_info_get_stream_info(info) {
            if let caps = gst_discoverer_stream_info_get_caps(stream) {
                result.container = caps.structureName
                gst_mini_object_unref(UnsafeMutableRawPointer(caps).assumingMemoryBound(to: GstMiniObject.self))
            }
            g_object_unref(UnsafeMutableRawPointer(stream))
        }
        if let list = gst_discoverer_info_get_video_streams(info) {
            let video = OpaquePointer(list.pointee.data)
            result.video = Video(
                width: Int(gst_discoverer_video_info_get_width(video)),
                height: Int(gst_discoverer_video_info_get_height(video)),
                frameRateNumerator: Int(gst_discoverer_video_info_get_framerate_num(video)),
                frameRateDenominator: Int(gst_discoverer_video_info_get_framerate_denom(video)),
                codec: streamCodec(UnsafeMutableRawPointer(list.pointee.data)),
                rotation: streamRotation(OpaquePointer(list.pointee.data)))
            gst_discoverer_stream_info_list_free(list)
        }
        if let list = gst_discoverer_info_get_audio_streams(info) {
            let audio = OpaquePointer(list.pointee.data)
            result.audio = Audio(
                sampleRate: Int(gst_discoverer_audio_info_get_sample_rate(audio)),
                channels: Int(gst_discoverer_audio_info_get_channels(audio)),
                codec: streamCodec(UnsafeMutableRawPointer(list.pointee.data)))
            gst_discoverer_stream_info_list_free(list)
        }
        return result
    }

    /// The `image-orientation` tag of a stream ("rotate-90", "flip-rotate-270" ...) as degrees.
    private static func streamRotation(_ stream: OpaquePointer?) -> Int {
        guard let stream, let tags = gst_discoverer_stream_info_get_tags(stream) else { return 0 }
        var value: UnsafeMutablePointer<gchar>?
        guard gst_tag_list_get_string(tags, "image-orientation", &value) != 0, let value else { return 0 }
        defer { g_free(value) }
        let text = String(cString: value)
        return [90, 180, 270].first { text.hasSuffix("rotate-\($0)") } ?? 0
    }

    private static func streamCodec(_ stream: UnsafeMutableRawPointer?) -> String? {
        guard let stream, let caps = gst_discoverer_stream_info_get_caps(OpaquePointer(stream)) else { return nil }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(caps).assumingMemoryBound(to: GstMiniObject.self)) }
        return caps.structureName
    }
}

extension UnsafeMutablePointer where Pointee == GstCaps {
    var structureName: String? {
        guard let structure = gst_caps_get_structure(self, 0) else { return nil }
        return String(cString: gst_structure_get_name(structure))
    }
}
