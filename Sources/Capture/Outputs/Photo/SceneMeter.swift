/// The brightness of a frame, for the flash's `auto` mode: the mean luma of a grid of samples, read
/// straight from the frame's bytes in the camera's raw format (no conversion, no copy).
enum SceneMeter {
    /// Below this mean luma (0 black ... 1 white) a scene needs the flash: about a fifth of full
    /// scale, a dim room under a camera's usual auto exposure.
    static let flashThreshold = 0.2

    /// The mean luma (0...1) of a `width` x `height` frame in `pixelFormat` (GStreamer's name: I420,
    /// NV12, YUY2, RGB ...), from about 4,000 samples; nil for a format it cannot read.
    static func meanLuma(_ bytes: UnsafeRawBufferPointer, pixelFormat: String?, width: Int, height: Int) -> Double? {
        guard width > 0, height > 0 else { return nil }
        // Where a pixel's luma (or its red, green, blue) sits: bytes per pixel, a row's bytes, offsets.
        let layout: (pixel: Int, stride: Int, offsets: [Int])
        switch pixelFormat ?? "I420" {
        case "I420", "YV12", "NV12", "NV21", "Y42B", "Y444", "GRAY8", "Y41B":
            layout = (1, (width + 3) & ~3, [0])
        case "YUY2", "YVYU":
            layout = (2, (width * 2 + 3) & ~3, [0])
        case "UYVY", "VYUY":
            layout = (2, (width * 2 + 3) & ~3, [1])
        case "RGB", "BGR":
            layout = (3, (width * 3 + 3) & ~3, [0, 1, 2])
        case "RGBx", "BGRx", "RGBA", "BGRA":
            layout = (4, width * 4, [0, 1, 2])
        case "xRGB", "xBGR", "ARGB", "ABGR":
            layout = (4, width * 4, [1, 2, 3])
        default:
            return nil
        }
        guard bytes.count >= layout.stride * (height - 1) + layout.pixel * width else { return nil }
        let step = max(1, Int((Double(width * height) / 4096).squareRoot()))
        var total = 0, count = 0
        for y in stride(from: step / 2, to: height, by: step) {
            for x in stride(from: step / 2, to: width, by: step) {
                let at = y * layout.stride + x * layout.pixel
                for offset in layout.offsets { total += Int(bytes[at + offset]) }
                count += layout.offsets.count
            }
        }
        guard count > 0 else { return nil }
        return Double(total) / Double(count) / 255
    }
}
