/// The quality level of a session's video, like `AVCaptureSession.Preset`.
public enum SessionPreset: String, Sendable, CaseIterable, Codable {
    /// The device's largest format, at its best frame rate up to 30 fps, unscaled: for still photos.
    case photo
    /// The device's largest format up to 1920x1080 (the largest one when none fits), unscaled.
    case high
    /// 480x360 frames: the device's 480x360 format, or scaled down from its smallest larger format.
    case medium
    /// 192x144 frames: the device's 192x144 format, or scaled down from its smallest larger format.
    case low
    /// 352x288 (CIF) frames: the device's 352x288 format, or scaled down from its smallest larger format.
    case cif352x288
    /// 640x480 (VGA) frames: the device's 640x480 format, or scaled down from its smallest larger format.
    case vga640x480
    /// 1280x720 (720p) frames: the device's 1280x720 format, or scaled down from its smallest larger
    /// format when the camera has no 1280x720 mode.
    case hd1280x720
    /// 1920x1080 (1080p) frames: the device's 1920x1080 format, or scaled down from its smallest larger format.
    case hd1920x1080
    /// 3840x2160 (4K) frames: the device's 3840x2160 format, or scaled down from its smallest larger format.
    case hd4K3840x2160
    /// The size and frame rate the input asks for (``InputOptions``), unscaled; the device's best format when it asks for none.
    case inputPriority = "input-priority"

    /// The preset a size asks for: the fixed-size preset of exactly that size when there is one (so the
    /// device is opened at it), else `high`, or `photo` above 1920x1080.
    public static func serving(_ size: Size?) -> SessionPreset {
        guard let size else { return .high }
        if let exact = allCases.first(where: { $0.fixedSize == size }) { return exact }
        return size.width > 1920 || size.height > 1080 ? .photo : .high
    }

    /// The fixed output size of presets that have one.
    public var fixedSize: Size? {
        switch self {
        case .cif352x288: Size(width: 352, height: 288)
        case .vga640x480: Size(width: 640, height: 480)
        case .hd1280x720: Size(width: 1280, height: 720)
        case .hd1920x1080: Size(width: 1920, height: 1080)
        case .hd4K3840x2160: Size(width: 3840, height: 2160)
        case .medium: Size(width: 480, height: 360)
        case .low: Size(width: 192, height: 144)
        case .photo, .high, .inputPriority: nil
        }
    }
}

/// The format a device is opened with and the size the session's outputs get.
public struct ResolvedFormat: Hashable, Sendable, CustomStringConvertible {
    /// What the device delivers.
    public var device: DeviceFormat
    /// The frame rate asked of the device.
    public var frameRate: FrameRate
    /// What the session's outputs receive (scaled from the device's size when they differ).
    public var outputSize: Size
    /// True when the outputs receive another size than the device delivers.
    public var isScaled: Bool { device.size != outputSize }
    /// The device's pixel format, size and frame rate, and the size it is scaled to when scaled: `YUY2 1280x720@30 scaled to 640x480`.
    public var description: String {
        "\(device.pixelFormat ?? device.mediaSubtype) \(device.size.map(\.description) ?? "?")@\(frameRate)" + (isScaled ? " scaled to \(outputSize)" : "")
    }
}

/// Picks the device format that serves a preset: the device's format is fixed for the session's
/// largest need and every output converts and scales for itself.
public enum FormatSelector {
    /// The preferred frame rate when a format offers several: the highest not above 30 fps.
    static let preferredMaxRate = 30.0

    /// The device format and the output size that serve `preset` on a device offering `formats`.
    /// - Parameters:
    ///   - preset: The session preset.
    ///   - formats: The formats the device offers.
    ///   - inputName: The input's name, for errors.
    ///   - requestedSize: For `inputPriority`, the size the input asked for (nil: the device's best).
    ///   - requestedRate: For `inputPriority`, the frame rate the input asked for (nil: the device's best).
    /// - Throws: `presetNotSupported` when no format of the device serves the preset.
    public static func resolve(
        preset: SessionPreset, formats: [DeviceFormat], inputName: String,
        requestedSize: Size? = nil, requestedRate: FrameRate? = nil
    ) throws(CaptureError) -> ResolvedFormat {
        // Force unwraps below: every candidate has a size (filtered here), and each pool `max` runs on
        // is checked non-empty first (candidates by the guard below, filters by their own guards).
        let video = formats.filter { $0.size != nil && !$0.frameRates.isEmpty }
        guard !video.isEmpty else {
            throw .presetNotSupported(preset: preset, input: inputName, reason: "the device reports no video format")
        }
        let decodable = video.filter { !$0.isCompressed || $0.mediaSubtype == "image/jpeg" }
        let candidates = decodable.isEmpty ? video : decodable

        switch preset {
        case .photo:
            let largest = candidates.max { rank($0, $1, target: nil) }!
            return ResolvedFormat(device: largest, frameRate: bestRate(largest.frameRates), outputSize: largest.size!)
        case .high:
            let fullHD = Size(width: 1920, height: 1080)
            let fitting = candidates.filter { fullHD.covers($0.size!) }
            let pool = fitting.isEmpty ? candidates : fitting
            let best = pool.max { rank($0, $1, target: nil) }!
            return ResolvedFormat(device: best, frameRate: bestRate(best.frameRates), outputSize: best.size!)
        case .inputPriority:
            var pool = candidates
            if let requestedSize {
                pool = pool.filter { $0.size == requestedSize }
                guard !pool.isEmpty else {
                    throw .presetNotSupported(
                        preset: preset, input: inputName,
                        reason: "the device offers no \(requestedSize) format (it offers \(sizeList(candidates)))")
                }
            }
            if let requestedRate {
                pool = pool.filter { $0.frameRates.contains { abs($0.value - requestedRate.value) < 0.01 } }
                guard !pool.isEmpty else {
                    throw .presetNotSupported(
                        preset: preset, input: inputName,
                        reason: "the device offers no format at \(requestedRate) fps\(requestedSize.map { " at \($0)" } ?? "")")
                }
                let best = pool.max { rank($0, $1, target: nil) }!
                let rate = best.frameRates.first { abs($0.value - requestedRate.value) < 0.01 }!
                return ResolvedFormat(device: best, frameRate: rate, outputSize: best.size!)
            }
            let best = pool.max { rank($0, $1, target: nil) }!
            return ResolvedFormat(device: best, frameRate: bestRate(best.frameRates), outputSize: best.size!)
        default:
            let target = preset.fixedSize!  // every preset but photo, high and input-priority has one
            let exact = candidates.filter { $0.size == target }
            if !exact.isEmpty {
                let best = exact.max { rank($0, $1, target: target) }!
                return ResolvedFormat(device: best, frameRate: bestRate(best.frameRates), outputSize: target)
            }
            // Served by scaling down from the smallest larger format; never by upscaling.
            let larger = candidates.filter { $0.size!.covers(target) }
            guard !larger.isEmpty else {
                throw .presetNotSupported(
                    preset: preset, input: inputName,
                    reason:
                        "the device's largest format is \(candidates.map(\.size!).max { $0.area < $1.area }!), smaller than \(target), and upscaling is refused"
                )
            }
            let best = larger.max { rank($0, $1, target: target) }!
            return ResolvedFormat(device: best, frameRate: bestRate(best.frameRates), outputSize: target)
        }
    }

    /// True when `lhs` is a worse choice than `rhs`. With a target: smaller area wins (less scaling);
    /// without: larger area wins. Then the better frame rate, then raw over compressed, then the
    /// cheaper pixel format.
    static func rank(_ lhs: DeviceFormat, _ rhs: DeviceFormat, target: Size?) -> Bool {
        let leftArea = lhs.size?.area ?? 0, rightArea = rhs.size?.area ?? 0
        if leftArea != rightArea { return target == nil ? leftArea < rightArea : leftArea > rightArea }
        let leftRate = bestRate(lhs.frameRates).value, rightRate = bestRate(rhs.frameRates).value
        if leftRate != rightRate { return leftRate < rightRate }
        if lhs.isCompressed != rhs.isCompressed { return lhs.isCompressed }
        return pixelPreference(lhs.pixelFormat) > pixelPreference(rhs.pixelFormat)
    }

    static func pixelPreference(_ format: String?) -> Int {
        ["I420", "NV12", "YUY2", "YV12", "UYVY", "RGBx", "BGRx", "RGB", "BGR"].firstIndex(of: format ?? "") ?? 100
    }

    static func bestRate(_ rates: [FrameRate]) -> FrameRate {
        rates.filter { $0.value <= preferredMaxRate + 0.01 }.max() ?? rates.min() ?? FrameRate(30)
    }

    static func sizeList(_ formats: [DeviceFormat]) -> String {
        Array(Set(formats.compactMap(\.size))).sorted { $0.area > $1.area }.map(\.description).joined(separator: ", ")
    }
}
