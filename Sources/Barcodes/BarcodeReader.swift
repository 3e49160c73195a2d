import CZXing
import CZbar
import Foundation

/// An 8-bit grey image in memory, rows packed (`width` bytes per row).
public struct GrayImage: Sendable, Equatable {
    /// Pixels per row (and bytes per row).
    public let width: Int
    /// Rows.
    public let height: Int
    /// Luma, 0 (black) to 255 (white), row after row from the top-left corner.
    public let pixels: [UInt8]

    /// An image from packed rows; `pixels.count` must be `width * height`.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(
            width > 0 && height > 0 && pixels.count == width * height, "a \(width)x\(height) grey image holds \(width * height) bytes, not \(pixels.count)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Copies a rectangle (in pixels) out of rows that are `stride` bytes apart.
    package init(copying base: UnsafeRawBufferPointer, stride: Int, x: Int, y: Int, width: Int, height: Int) {
        var pixels = [UInt8](repeating: 0, count: width * height)
        // Both buffers hold at least one row (width and height are positive), so both have base addresses.
        pixels.withUnsafeMutableBytes { target in
            for row in 0..<height {
                let from = (y + row) * stride + x
                target.baseAddress!.advanced(by: row * width).copyMemory(from: base.baseAddress!.advanced(by: from), byteCount: width)
            }
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Reads a binary PGM file (`P5`, 8-bit), the grey format of ImageMagick and netpbm.
    public init(contentsOfPGM path: String) throws(BarcodeError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadableImage(path: path, reason: "cannot read the file")
        }
        let bytes = [UInt8](data)
        var index = 0
        func token() -> String {
            var text = ""
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "#") {
                    while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
                } else if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                    if !text.isEmpty { break }
                    index += 1
                } else {
                    text.append(Character(UnicodeScalar(byte)))
                    index += 1
                }
            }
            return text
        }
        let magic = token(), width = Int(token()) ?? 0, height = Int(token()) ?? 0, maximum = Int(token()) ?? 0
        index += 1
        guard magic == "P5", width > 0, height > 0, maximum == 255, bytes.count - index >= width * height else {
            throw .unreadableImage(path: path, reason: "not an 8-bit binary PGM (P5) image")
        }
        self.init(width: width, height: height, pixels: Array(bytes[index..<(index + width * height)]))
    }

    /// The pixel rectangle a normalized rect covers (at least one pixel, inside the image).
    package func pixelRect(_ rect: NormalizedRect) -> (x: Int, y: Int, width: Int, height: Int) {
        Self.pixelRect(rect, width: width, height: height)
    }

    package static func pixelRect(_ rect: NormalizedRect, width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let x0 = min(max(Int((rect.x * Double(width)).rounded(.down)), 0), width - 1)
        let y0 = min(max(Int((rect.y * Double(height)).rounded(.down)), 0), height - 1)
        let x1 = min(max(Int(((rect.x + rect.width) * Double(width)).rounded(.up)), x0 + 1), width)
        let y1 = min(max(Int(((rect.y + rect.height) * Double(height)).rounded(.up)), y0 + 1), height)
        return (x0, y0, x1 - x0, y1 - y0)
    }
}

/// Reads machine-readable codes in grey images with zbar and zxing-cpp, the decoders behind
/// `CaptureMetadataOutput`. Usable on its own for still images.
///
/// The `auto` backend is zxing-cpp 3 for every type: on the project's corpus zbar reads no code it
/// misses (`capture bench --only barcode`). `zbar` remains a backend of its own (QR and the linear
/// codes); with both decoders on one reader, a code both read is reported once.
public final class BarcodeReader: Sendable {
    /// The decoder library (or both).
    public let backend: BarcodeBackend
    /// The types this reader reports.
    public let types: Set<MetadataObjectType>
    let zbarTypes: Set<MetadataObjectType>
    let zxingTypes: Set<MetadataObjectType>
    private let zbar: ZBarScanner?
    /// With both decoders: the thread zbar reads on while zxing-cpp reads on the caller's (one thread
    /// for the reader's life, not one per frame).
    private let zbarWorker: BarcodeWorker?

    /// A reader for `types` (nil: every type the backend reads). A type the backend cannot read is a
    /// typed error naming it.
    public init(backend: BarcodeBackend = .auto, types: [MetadataObjectType]? = nil, object: String = "barcode reader") throws(BarcodeError) {
        if let types { try backend.checkReads(types, object: object) }
        let wanted = Set(types ?? Array(backend.availableTypes))
        self.backend = backend
        self.types = wanted
        switch backend {
        case .zbar:
            zbarTypes = wanted
            zxingTypes = []
        case .zxing:
            zbarTypes = []
            zxingTypes = wanted
        case .auto:
            zxingTypes = wanted
            zbarTypes = wanted.intersection(BarcodeBackend.zbarAlsoReadsInAuto)
        }
        // Beside zxing-cpp, zbar scans every other row and column: half the time, and zxing-cpp reads what
        // it would add there; alone it scans every line.
        zbar = zbarTypes.isEmpty ? nil : ZBarScanner(types: zbarTypes, density: backend == .auto ? 2 : 1)
        zbarWorker = zbar != nil && !zxingTypes.isEmpty ? BarcodeWorker(name: "capture.barcode.zbar") : nil
    }

    deinit {
        zbarWorker?.stop()
    }

    /// The codes in `image`, looking only inside `rectOfInterest` (the image is cropped first);
    /// positions are normalized to the whole image.
    public func read(_ image: GrayImage, rectOfInterest: NormalizedRect = .full, timestamp: Double = 0) -> [MetadataMachineReadableCodeObject] {
        let crop = image.pixelRect(rectOfInterest)
        if crop.x == 0 && crop.y == 0 && crop.width == image.width && crop.height == image.height {
            return read(cropped: image, origin: (0, 0), frame: (image.width, image.height), timestamp: timestamp)
        }
        let cropped = image.pixels.withUnsafeBytes { bytes in
            GrayImage(copying: bytes, stride: image.width, x: crop.x, y: crop.y, width: crop.width, height: crop.height)
        }
        return read(cropped: cropped, origin: (crop.x, crop.y), frame: (image.width, image.height), timestamp: timestamp)
    }

    /// Reads a crop of a frame whose top-left corner is at `origin` (pixels) in a frame of size `frame`.
    /// `frameNumber` nil: a still, read with every pass at once; else a frame of a stream, read with
    /// zxing-cpp's quick look and one more pass, the next in turn (`ZXingDecoder.Pass`): a code that
    /// only a costly pass finds is found within a few frames, and a frame costs a fraction of a still.
    package func read(
        cropped image: GrayImage, origin: (x: Int, y: Int), frame: (width: Int, height: Int), timestamp: Double, frameNumber: Int? = nil
    ) -> [MetadataMachineReadableCodeObject] {
        // The passes that can find something here (the doubled image only for small frames with matrix codes).
        let useful = ZXingDecoder.Pass.allCases.filter { pass in
            pass != .doubled || (max(image.width, image.height) <= 1024 && zxingTypes.contains { !$0.isLinear && $0 != .pdf417 && $0 != .microPDF417 })
        }
        let passes = frameNumber.map { [useful[$0 % useful.count]] }
        var found: [Detection]
        if let zbar, let zbarWorker {
            // Both decoders read the same frame at once, zbar on the reader's own thread (not a pool's);
            // zxing-cpp's reads come first.
            let zxingTypes = zxingTypes
            let (zxingReads, zbarReads) = zbarWorker.both({ ZXingDecoder.decode(image, types: zxingTypes, passes: passes) }, { zbar.decode(image) })
            found = zxingReads + zbarReads
        } else {
            found = ZXingDecoder.decode(image, types: zxingTypes, passes: passes) + (zbar?.decode(image) ?? [])
        }
        // One code read by both decoders is one result, with zxing-cpp's corners (zbar's when zxing-cpp
        // saw a linear code on one line only).
        var merged: [Detection] = []
        for detection in found where types.contains(detection.type) {
            if let index = merged.firstIndex(where: { $0.type == detection.type && $0.text == detection.text }) {
                merged[index].decoders.append(contentsOf: detection.decoders)
                merged[index].evidence += detection.evidence
                if merged[index].isFlat && !detection.isFlat { merged[index].corners = detection.corners }
            } else {
                merged.append(detection)
            }
        }
        return Self.resolvingConflicts(merged).map { detection in
            var corners = detection.corners
            if detection.type.isLinear { corners = BarcodeGeometry.linearExtent(corners, in: image) }
            let normalized = corners.map { point in
                NormalizedPoint(
                    x: min(max((point.x + Double(origin.x)) / Double(frame.width), 0), 1),
                    y: min(max((point.y + Double(origin.y)) / Double(frame.height), 0), 1))
            }
            return MetadataMachineReadableCodeObject(
                type: detection.type, stringValue: detection.text, rawBytes: detection.bytes,
                corners: normalized, timestamp: timestamp, decoders: detection.decoders)
        }
    }
}

extension BarcodeReader {
    /// Drops the weaker of two different reads of one linear code. A linear code read two ways in one
    /// place is a misread (a wrong digit that passed the check digit) or a partial read (some of an
    /// ITF's digits); the read contained in a longer one is partial, else the read both decoders
    /// agree on, else the one more scan lines agree on wins. Reads of equal weight both go.
    static func resolvingConflicts(_ detections: [Detection]) -> [Detection] {
        var dropped = Set<Int>()
        for i in detections.indices where detections[i].type.isLinear {
            for j in detections.indices where j > i && detections[j].type == detections[i].type && detections[i].overlaps(detections[j]) {
                let a = detections[i], b = detections[j]
                if b.text.contains(a.text) {
                    dropped.insert(i)
                } else if a.text.contains(b.text) {
                    dropped.insert(j)
                } else if a.weight > b.weight {
                    dropped.insert(j)
                } else if b.weight > a.weight {
                    dropped.insert(i)
                } else {
                    dropped.formUnion([i, j])
                }
            }
        }
        return detections.indices.filter { !dropped.contains($0) }.map { detections[$0] }
    }
}

/// One code as a decoder saw it, in pixels of the decoded image.
struct Detection: Sendable {
    var type: MetadataObjectType
    var text: String
    var bytes: [UInt8]
    /// Top-left, top-right, bottom-right, bottom-left.
    var corners: [PixelPoint]
    var decoders: [BarcodeBackend]
    /// How many scan lines (zxing-cpp's line count, zbar's quality) agreed on it; 1 for matrix codes.
    var evidence: Int

    /// How much to trust the read: agreement of both decoders first, then scan lines.
    var weight: Int { (Set(decoders).count - 1) * 1_000_000 + evidence }

    /// The reading line: from the middle of the left edge to the middle of the right edge.
    var readingLine: (PixelPoint, PixelPoint) { (PixelPoint.mid(corners[0], corners[3]), PixelPoint.mid(corners[1], corners[2])) }

    /// True when the two reads are in one place: the middle of either lies near the other's reading line.
    func overlaps(_ other: Detection) -> Bool {
        func near(_ point: PixelPoint, _ line: (PixelPoint, PixelPoint)) -> Bool {
            let segment = line.1 - line.0
            let length = segment.length
            guard length > 0 else { return (point - line.0).length < 8 }
            let along = min(max((point - line.0).dot(segment) / (length * length), 0), 1)
            let distance = (point - (line.0 + segment * along)).length
            return distance <= max(8, length / 4)
        }
        let mine = readingLine, theirs = other.readingLine
        return near(PixelPoint.mid(mine.0, mine.1), theirs) || near(PixelPoint.mid(theirs.0, theirs.1), mine)
    }

    /// True when the corners enclose no area (a linear code read on one scan line).
    var isFlat: Bool {
        guard corners.count == 4 else { return true }
        let area = abs((corners[2] - corners[0]).cross(corners[3] - corners[1])) / 2
        return area < 1
    }
}

// MARK: zxing-cpp

/// zxing-cpp 3 through its own C API (`ZXingC.h`).
enum ZXingDecoder {
    /// The zxing-cpp symbologies asked for when a type is wanted (a symbology includes its variants:
    /// `QRCode` reads Micro QR too, `PDF417` MicroPDF417); what comes back is sorted by `type(of:)`.
    static let symbologies: [(MetadataObjectType, ZXing_BarcodeFormat)] = [
        (.qr, ZXing_BarcodeFormat_QRCode), (.microQR, ZXing_BarcodeFormat_MicroQRCode), (.aztec, ZXing_BarcodeFormat_Aztec),
        (.pdf417, ZXing_BarcodeFormat_PDF417), (.microPDF417, ZXing_BarcodeFormat_MicroPDF417),
        (.dataMatrix, ZXing_BarcodeFormat_DataMatrix), (.ean8, ZXing_BarcodeFormat_EAN8), (.ean13, ZXing_BarcodeFormat_EAN13),
        (.upcA, ZXing_BarcodeFormat_UPCA), (.upcE, ZXing_BarcodeFormat_UPCE), (.code39, ZXing_BarcodeFormat_Code39),
        (.code39Mod43, ZXing_BarcodeFormat_Code39), (.code93, ZXing_BarcodeFormat_Code93), (.code128, ZXing_BarcodeFormat_Code128),
        (.interleaved2of5, ZXing_BarcodeFormat_ITF), (.itf14, ZXing_BarcodeFormat_ITF), (.codabar, ZXing_BarcodeFormat_Codabar),
        (.gs1DataBar, ZXing_BarcodeFormat_DataBar), (.gs1DataBarExpanded, ZXing_BarcodeFormat_DataBarExp),
        (.gs1DataBarLimited, ZXing_BarcodeFormat_DataBarLtd),
    ]

    /// The project's type of a zxing-cpp format, before the check-character refinement (nil: a format
    /// the project does not report, like rMQR, PZN or an EAN add-on).
    static func type(of format: ZXing_BarcodeFormat) -> MetadataObjectType? {
        switch format {
        case ZXing_BarcodeFormat_QRCode, ZXing_BarcodeFormat_QRCodeModel1, ZXing_BarcodeFormat_QRCodeModel2: .qr
        case ZXing_BarcodeFormat_MicroQRCode: .microQR
        case ZXing_BarcodeFormat_Aztec, ZXing_BarcodeFormat_AztecCode, ZXing_BarcodeFormat_AztecRune: .aztec
        case ZXing_BarcodeFormat_PDF417, ZXing_BarcodeFormat_CompactPDF417: .pdf417
        case ZXing_BarcodeFormat_MicroPDF417: .microPDF417
        case ZXing_BarcodeFormat_DataMatrix: .dataMatrix
        case ZXing_BarcodeFormat_EAN8: .ean8
        case ZXing_BarcodeFormat_EAN13, ZXing_BarcodeFormat_ISBN: .ean13
        case ZXing_BarcodeFormat_UPCA: .upcA
        case ZXing_BarcodeFormat_UPCE: .upcE
        case ZXing_BarcodeFormat_Code39, ZXing_BarcodeFormat_Code39Std, ZXing_BarcodeFormat_Code39Ext: .code39
        case ZXing_BarcodeFormat_Code93: .code93
        case ZXing_BarcodeFormat_Code128: .code128
        case ZXing_BarcodeFormat_ITF, ZXing_BarcodeFormat_ITF14: .interleaved2of5
        case ZXing_BarcodeFormat_Codabar: .codabar
        case ZXing_BarcodeFormat_DataBar, ZXing_BarcodeFormat_DataBarOmni, ZXing_BarcodeFormat_DataBarStk,
            ZXing_BarcodeFormat_DataBarStkOmni:
            .gs1DataBar
        case ZXing_BarcodeFormat_DataBarExp, ZXing_BarcodeFormat_DataBarExpStk: .gs1DataBarExpanded
        case ZXing_BarcodeFormat_DataBarLtd: .gs1DataBarLimited
        default: nil
        }
    }

    /// What zxing-cpp does with a frame besides its quick look (halved copies of a large frame, and
    /// linear codes standing on end in the frame turned by 90 degrees: 17 ms at 1920x1080 on the
    /// corpus's stills, against 92 ms with everything at once). Each finds codes the quick look misses.
    enum Pass: Int, Sendable, CaseIterable {
        /// More scan lines and binarizer passes (+19 ms at 1920x1080 without rotation).
        case harder
        /// Light codes on a dark ground: zxing-cpp's inverted pass for matrix codes, a negative of the
        /// frame for linear and PDF417 codes (its 1D and PDF417 readers skip the inverted pass).
        case inverted
        /// Matrix codes with modules of 3 pixels and less, in the image doubled (frames up to 1024
        /// pixels).
        case doubled
    }

    /// Reads `image`; `types` are the wanted types (Code 39 and ITF reads are sorted into them by
    /// their check characters). `passes` nil: every pass at once (a still image); else the quick look
    /// and those passes (a live stream spreads them over its frames).
    static func decode(_ image: GrayImage, types: Set<MetadataObjectType>, passes: [Pass]? = nil) -> [Detection] {
        guard let options = ZXing_ReaderOptions_new() else { return [] }
        defer { ZXing_ReaderOptions_delete(options) }
        let linear = types.filter { $0.isLinear || $0 == .pdf417 || $0 == .microPDF417 }
        let matrix = types.subtracting(linear)
        func configure(_ wanted: Set<MetadataObjectType>, harder: Bool, rotate: Bool, invert: Bool, downscale: Bool) -> Bool {
            configureOptions(options, wanted, harder: harder, rotate: rotate, invert: invert, downscale: downscale)
        }
        var detections: [Detection] = []
        func add(_ found: [Detection]) {
            for detection in found where !detections.contains(where: { $0.type == detection.type && $0.text == detection.text }) {
                detections.append(detection)
            }
        }
        let all = passes == nil
        let chosen = Set(passes ?? Pass.allCases)
        // The main pass: everything zxing-cpp does itself for a still, the quick look for a stream frame.
        if configure(types, harder: all, rotate: true, invert: all, downscale: true) { add(read(image, options: options, scale: 1, types: types)) }
        if !all && chosen.contains(.harder), configure(types, harder: true, rotate: false, invert: false, downscale: true) {
            add(read(image, options: options, scale: 1, types: types))
        }
        if chosen.contains(.inverted) {
            if !all, configure(matrix, harder: false, rotate: false, invert: true, downscale: true) {
                add(read(image, options: options, scale: 1, types: types))
            }
            if configure(linear, harder: all, rotate: all, invert: false, downscale: true) {
                add(read(image.negative(), options: options, scale: 1, types: types))
            }
        }
        // A linear code the quick look read is read again, with more scan lines, in its own part of the
        // frame (about a millisecond): zxing-cpp 3.1.1's quick look misreads some upside-down EAN-8s
        // (eight lines agreeing on a wrong value whose check digit is right by chance), its slower
        // look does not. The second read's value wins; a code it cannot read is dropped.
        if !all {
            detections = detections.compactMap { detection in
                guard detection.type.isLinear else { return detection }
                return confirm(detection, in: image, options: options, types: types)
            }
        }
        if chosen.contains(.doubled) && max(image.width, image.height) <= 1024,
            configure(matrix.filter { $0 != .pdf417 && $0 != .microPDF417 }, harder: all, rotate: false, invert: false, downscale: false)
        {
            add(read(image.doubled(), options: options, scale: 0.5, types: types))
        }
        return detections
    }

    /// Sets `options` for one pass over `wanted`; false when no zxing-cpp format is wanted.
    private static func configureOptions(
        _ options: OpaquePointer, _ wanted: Set<MetadataObjectType>, harder: Bool, rotate: Bool, invert: Bool, downscale: Bool
    ) -> Bool {
        var formats: [ZXing_BarcodeFormat] = []
        for (type, format) in symbologies where wanted.contains(type) && !formats.contains(format) { formats.append(format) }
        guard !formats.isEmpty else { return false }
        ZXing_ReaderOptions_setFormats(options, formats, Int32(formats.count))
        ZXing_ReaderOptions_setTryHarder(options, harder)
        ZXing_ReaderOptions_setTryRotate(options, rotate && wanted.contains(where: \.isLinear))
        ZXing_ReaderOptions_setTryInvert(options, invert)
        ZXing_ReaderOptions_setTryDownscale(options, downscale)
        ZXing_ReaderOptions_setReturnErrors(options, false)
        // The symbol's content as transmitted (zxing-cpp 3's default is the human-readable form: UPC-E
        // expanded to 13 digits, GS1 application identifiers in parentheses).
        ZXing_ReaderOptions_setTextMode(options, ZXing_TextMode_Plain)
        return true
    }

    /// `detection` read again with more scan lines and rotation in a crop around it (half its size
    /// again on each side); nil when that read finds no code of its type there.
    private static func confirm(
        _ detection: Detection, in image: GrayImage, options: OpaquePointer, types: Set<MetadataObjectType>
    ) -> Detection? {
        let xs = detection.corners.map(\.x), ys = detection.corners.map(\.y)
        guard let minX = xs.min(), let maxX = xs.max(), let minY = ys.min(), let maxY = ys.max() else { return nil }
        let marginX = max((maxX - minX) / 2, 16), marginY = max((maxY - minY) / 2, 16)
        let x0 = max(Int(minX - marginX), 0), y0 = max(Int(minY - marginY), 0)
        let x1 = min(Int(maxX + marginX), image.width), y1 = min(Int(maxY + marginY), image.height)
        guard x1 - x0 >= 8, y1 - y0 >= 8 else { return nil }
        let crop = image.pixels.withUnsafeBytes { GrayImage(copying: $0, stride: image.width, x: x0, y: y0, width: x1 - x0, height: y1 - y0) }
        let family: Set<MetadataObjectType> = types.filter { $0.family == detection.type.family }
        guard configureOptions(options, family.isEmpty ? [detection.type] : family, harder: true, rotate: true, invert: false, downscale: false)
        else { return nil }
        guard
            var again = read(crop, options: options, scale: 1, types: types).first(where: { $0.type.family == detection.type.family })
        else { return nil }
        again.corners = again.corners.map { PixelPoint(x: $0.x + Double(x0), y: $0.y + Double(y0)) }
        return again
    }

    /// One zxing-cpp pass over `image`; corners are multiplied by `scale`.
    private static func read(_ image: GrayImage, options: OpaquePointer, scale: Double, types: Set<MetadataObjectType>) -> [Detection] {
        image.pixels.withUnsafeBufferPointer { pixels -> [Detection] in
            guard
                let view = ZXing_ImageView_new(
                    pixels.baseAddress, Int32(image.width), Int32(image.height), ZXing_ImageFormat_Lum, Int32(image.width), 1)
            else { return [] }
            defer { ZXing_ImageView_delete(view) }
            guard let barcodes = ZXing_ReadBarcodes(view, options) else { return [] }
            defer { ZXing_Barcodes_delete(barcodes) }
            var detections: [Detection] = []
            for index in 0..<ZXing_Barcodes_size(barcodes) {
                guard let barcode = ZXing_Barcodes_at(barcodes, index), ZXing_Barcode_isValid(barcode),
                    let family = type(of: ZXing_Barcode_format(barcode))
                else { continue }
                var text = owned(ZXing_Barcode_text(barcode))
                // zxing-cpp 3 gives a UPC-E's content as the 13 digits of the EAN-13 it stands for (ISO/IEC
                // 15420); the 8 digits printed under it, which zbar returns and AVFoundation reports,
                // are in its extra field UPCE.
                if family == .upcE, case let digits = owned(ZXing_Barcode_extra(barcode, "UPCE")), digits.count == 8 { text = digits }
                var count: Int32 = 0
                let bytes = ZXing_Barcode_bytes(barcode, &count).map { pointer in
                    defer { ZXing_free(pointer) }
                    return Array(UnsafeBufferPointer(start: pointer, count: Int(count)))
                }
                // Code 39's symbology identifier says whether its last character checked (]A1, ]A5).
                let identifier = owned(ZXing_Barcode_symbologyIdentifier(barcode))
                let checked = family == .code39 ? ["]A1", "]A5"].contains(identifier) : nil
                guard let type = MetadataObjectType.refined(family, text: text, checkCharacterValid: checked, wanted: types) else { continue }
                text = type.conventionalValue(text)
                guard !detections.contains(where: { $0.type == type && $0.text == text }) else { continue }
                let position = ZXing_Barcode_position(barcode)
                let corners = [position.topLeft, position.topRight, position.bottomRight, position.bottomLeft].map {
                    PixelPoint(x: Double($0.x) * scale, y: Double($0.y) * scale)
                }
                detections.append(
                    Detection(
                        type: type, text: text, bytes: bytes ?? Array(text.utf8), corners: corners, decoders: [.zxing],
                        evidence: max(Int(ZXing_Barcode_lineCount(barcode)), 1)))
            }
            return detections
        }
    }

    /// A string zxing-cpp allocated, released.
    private static func owned(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        defer { ZXing_free(pointer) }
        return String(cString: pointer)
    }

    /// The zxing-cpp version linked ("3.1.1").
    static var version: String { ZXing_Version().map { String(cString: $0) } ?? "unknown" }
}

extension MetadataObjectType {
    /// The wanted type a read of `family` is, or nil when none: a Code 39 read is `code39Mod43` when
    /// its check character is right and that type is wanted, an ITF read `itf14` when it holds 14
    /// digits with a right GTIN check digit and that type is wanted. `checkCharacterValid` is the
    /// decoder's own verdict on Code 39's check character (nil: computed here).
    static func refined(
        _ family: MetadataObjectType, text: String, checkCharacterValid: Bool? = nil, wanted: Set<MetadataObjectType>
    ) -> MetadataObjectType? {
        switch family {
        case .code39, .code39Mod43:
            let checks = checkCharacterValid ?? Code39.checkCharacterIsValid(text)
            if checks && wanted.contains(.code39Mod43) { return .code39Mod43 }
            return wanted.contains(.code39) ? .code39 : nil
        case .ean13 where text.count == 13 && text.hasPrefix("0") && wanted.contains(.upcA):
            // An EAN-13 with a leading 0 is a UPC-A (zxing-cpp 3 reports it as EAN-13 when both are asked for).
            return .upcA
        case .interleaved2of5, .itf14:
            let gtin = text.count == 14 && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber) && GTIN.isValid(text)
            if gtin && wanted.contains(.itf14) { return .itf14 }
            return wanted.contains(.interleaved2of5) ? .interleaved2of5 : nil
        default:
            return wanted.contains(family) ? family : nil
        }
    }
}

extension MetadataObjectType {
    /// A decoder's text in the form this type's values take: UPC-A in 12 digits (not as an EAN-13
    /// with a leading 0), DataBar and DataBar Limited as their GTIN-14 (without the application
    /// identifier 01 that zxing-cpp 3 and zbar put before it).
    func conventionalValue(_ text: String) -> String {
        switch self {
        case .upcA where text.count == 13 && text.hasPrefix("0"): String(text.dropFirst())
        case .gs1DataBar where text.count == 16 && text.hasPrefix("01"), .gs1DataBarLimited where text.count == 16 && text.hasPrefix("01"):
            String(text.dropFirst(2))
        default: text
        }
    }
}

/// Code 39's mod-43 check character.
enum Code39 {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%")

    /// True when `text` has at least two characters of Code 39's alphabet and the last is the mod-43
    /// sum of the others.
    static func checkCharacterIsValid(_ text: String) -> Bool {
        let characters = Array(text)
        guard characters.count >= 2, let check = characters.last.flatMap({ alphabet.firstIndex(of: $0) }) else { return false }
        var sum = 0
        for character in characters.dropLast() {
            guard let value = alphabet.firstIndex(of: character) else { return false }
            sum += value
        }
        return sum % 43 == check
    }
}

/// GS1's mod-10 check digit.
enum GTIN {
    /// True when the last digit of `digits` is the GS1 check digit of the others (weights 3, 1, 3 ...
    /// from the right of the payload).
    static func isValid(_ digits: String) -> Bool {
        let values = digits.compactMap(\.wholeNumberValue)
        guard values.count == digits.count, values.count >= 2 else { return false }
        var sum = 0
        for (index, value) in values.dropLast().reversed().enumerated() { sum += value * (index % 2 == 0 ? 3 : 1) }
        return (10 - sum % 10) % 10 == values.last
    }
}

extension GrayImage {
    /// The image with black and white swapped.
    func negative() -> GrayImage {
        GrayImage(width: width, height: height, pixels: pixels.map { 255 - $0 })
    }

    /// The image at twice its size (bilinear: target pixel t samples source position t / 2 - 0.25).
    func doubled() -> GrayImage {
        let w = width * 2, h = height * 2
        var out = [UInt8](repeating: 0, count: w * h)
        // For target index t: the two source indices and the first one's weight, in quarters.
        func neighbours(_ t: Int, _ size: Int) -> (Int, Int, Int) {
            let k = t / 2
            return t % 2 == 0 ? (max(k - 1, 0), k, 1) : (k, min(k + 1, size - 1), 3)
        }
        let columns = (0..<w).map { neighbours($0, width) }
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for y in 0..<h {
                    let (y0, y1, wy) = neighbours(y, height)
                    let r0 = y0 * width, r1 = y1 * width
                    for x in 0..<w {
                        let (x0, x1, wx) = columns[x]
                        let top = Int(source[r0 + x0]) * wx + Int(source[r0 + x1]) * (4 - wx)
                        let bottom = Int(source[r1 + x0]) * wx + Int(source[r1 + x1]) * (4 - wx)
                        target[y * w + x] = UInt8((top * wy + bottom * (4 - wy) + 8) / 16)
                    }
                }
            }
        }
        return GrayImage(width: w, height: h, pixels: out)
    }
}

// MARK: zbar

/// zbar, configured for some types. A new zbar image scanner reads each image: a scanner keeps half
/// an EAN or UPC from one image and can join it to half of another's (a code that was never there).
struct ZBarScanner: Sendable {
    let types: Set<MetadataObjectType>
    /// Scan every `density`-th row and column (1: every one).
    let density: Int32

    static let symbols: [(MetadataObjectType, zbar_symbol_type_t)] = [
        (.qr, ZBAR_QRCODE), (.ean8, ZBAR_EAN8), (.ean13, ZBAR_EAN13), (.upcA, ZBAR_UPCA), (.upcE, ZBAR_UPCE),
        (.code39, ZBAR_CODE39), (.code93, ZBAR_CODE93), (.code128, ZBAR_CODE128), (.interleaved2of5, ZBAR_I25),
        (.codabar, ZBAR_CODABAR), (.gs1DataBar, ZBAR_DATABAR), (.gs1DataBarExpanded, ZBAR_DATABAR_EXP),
    ]
    /// zbar's "Y800" (8-bit grey), the value of `zbar_fourcc('Y','8','0','0')` (a macro Swift cannot import).
    static let grey: UInt = UInt(UInt8(ascii: "Y")) | UInt(UInt8(ascii: "8")) << 8 | UInt(UInt8(ascii: "0")) << 16 | UInt(UInt8(ascii: "0")) << 24

    private func makeScanner() -> OpaquePointer? {
        guard let scanner = zbar_image_scanner_create() else { return nil }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        for (type, symbol) in Self.symbols where types.contains(where: { $0.family == type }) {
            zbar_image_scanner_set_config(scanner, symbol, ZBAR_CFG_ENABLE, 1)
        }
        // UPC-A is read by the EAN-13 decoder: it must run for UPC-A alone too.
        if types.contains(.upcA) && !types.contains(.ean13) {
            zbar_image_scanner_set_config(scanner, ZBAR_EAN13, ZBAR_CFG_ENABLE, 1)
        }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_X_DENSITY, density)
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_Y_DENSITY, density)
        return scanner
    }

    func decode(_ image: GrayImage) -> [Detection] {
        guard let scanner = makeScanner() else { return [] }
        defer { zbar_image_scanner_destroy(scanner) }
        guard let zimage = zbar_image_create() else { return [] }
        defer { zbar_image_destroy(zimage) }
        zbar_image_set_format(zimage, Self.grey)
        zbar_image_set_size(zimage, UInt32(image.width), UInt32(image.height))
        return image.pixels.withUnsafeBytes { pixels -> [Detection] in
            // zbar only borrows the pixels: they are detached again before this closure returns.
            zbar_image_set_data(zimage, pixels.baseAddress, UInt(pixels.count), nil)
            defer { zbar_image_set_data(zimage, nil, 0, nil) }
            guard zbar_scan_image(scanner, zimage) > 0 else { return [] }
            var detections: [Detection] = []
            var symbol = zbar_image_first_symbol(zimage)
            while let current = symbol {
                if let detection = Self.detection(current, in: image, wanted: types) { detections.append(detection) }
                symbol = zbar_symbol_next(current)
            }
            return detections
        }
    }

    private static func detection(_ symbol: OpaquePointer, in image: GrayImage, wanted: Set<MetadataObjectType>) -> Detection? {
        let kind = zbar_symbol_get_type(symbol)
        guard let family = symbols.first(where: { $0.1 == kind })?.0, let data = zbar_symbol_get_data(symbol) else { return nil }
        let length = Int(zbar_symbol_get_data_length(symbol))
        var bytes = data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
        // A linear code zbar saw on a single scan line is too often noise: it must agree on two.
        if family.isLinear && zbar_symbol_get_quality(symbol) < 2 { return nil }
        // DataBar: zbar prefixes the GTIN-14 with its application identifier (01); zxing-cpp does not.
        if family == .gs1DataBar && bytes.count == 16 && bytes.starts(with: [UInt8(ascii: "0"), UInt8(ascii: "1")]) {
            bytes.removeFirst(2)
        }
        guard let type = MetadataObjectType.refined(family, text: String(decoding: bytes, as: UTF8.self), wanted: wanted) else { return nil }
        var points: [PixelPoint] = []
        for index in 0..<zbar_symbol_get_loc_size(symbol) {
            points.append(PixelPoint(x: Double(zbar_symbol_get_loc_x(symbol, index)), y: Double(zbar_symbol_get_loc_y(symbol, index))))
        }
        guard !points.isEmpty else { return nil }
        let corners: [PixelPoint]
        if kind == ZBAR_QRCODE && points.count == 4 {
            // zbar lists a QR code's corners top-left, bottom-left, bottom-right, top-right.
            corners = [points[0], points[3], points[2], points[1]]
        } else {
            // zbar's points are where scan lines finished decoding: often only one end of the code.
            // The ends are found on the scan line through the middle point, in zbar's reading order.
            let orientation = zbar_symbol_get_orientation(symbol)
            let horizontal = orientation != ZBAR_ORIENT_RIGHT && orientation != ZBAR_ORIENT_LEFT
            let middle = points.sorted { horizontal ? ($0.y, $0.x) < ($1.y, $1.x) : ($0.x, $0.y) < ($1.x, $1.y) }[points.count / 2]
            // DataBar's finder elements are up to 8 modules wide (and it needs no quiet zone).
            let quiet: Double = type == .gs1DataBar ? 10 : 7
            // `points` is not empty (checked above), so `along` has a minimum and a maximum.
            let along = points.map { horizontal ? $0.x : $0.y }
            let fallback =
                horizontal
                ? (PixelPoint(x: along.min()!, y: middle.y), PixelPoint(x: along.max()!, y: middle.y))
                : (PixelPoint(x: middle.x, y: along.min()!), PixelPoint(x: middle.x, y: along.max()!))
            let (low, high) = BarcodeGeometry.scanLineExtent(image, through: middle, horizontal: horizontal, quietModules: quiet) ?? fallback
            let forward = orientation != ZBAR_ORIENT_DOWN && orientation != ZBAR_ORIENT_LEFT
            let (start, end) = forward ? (low, high) : (high, low)
            corners = [start, end, end, start]
        }
        return Detection(
            type: type, text: String(decoding: bytes, as: UTF8.self), bytes: bytes, corners: corners, decoders: [.zbar],
            evidence: Int(zbar_symbol_get_quality(symbol)))
    }
}
