import GStreamer

extension CaptureDevice {
    /// What the device can deliver to the library, like the picker's
    /// `availableMediaTypesForSourceType:`: a camera gives photos when a still encoder (jpegenc or
    /// pngenc) is installed and videos when a movie can be encoded (x264enc or vp8enc, and a muxer); a
    /// microphone gives neither on its own (a movie needs a camera). Checked against the installed
    /// GStreamer elements now.
    public var availableMediaTypes: [MediaLibrary.MediaKind] {
        guard mediaType == .video else { return [] }
        var kinds: [MediaLibrary.MediaKind] = []
        if GStreamer.hasElement("jpegenc") || GStreamer.hasElement("pngenc") { kinds.append(.photo) }
        let encodes = GStreamer.hasElement("x264enc") && GStreamer.hasElement("mp4mux") || GStreamer.hasElement("vp8enc") && GStreamer.hasElement("webmmux")
        if encodes { kinds.append(.video) }
        return kinds
    }
}

extension MediaLibrary {
    /// True when a photo or video of the kind can be picked from the library: its folder holds one
    /// (the picker's `isSourceTypeAvailable(.photoLibrary)`).
    public func isAvailable(_ kind: MediaKind) -> Bool { newest(kind) != nil }
}
