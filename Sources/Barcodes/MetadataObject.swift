import Foundation

/// The machine-readable code symbologies a `CaptureMetadataOutput` can detect, like
/// `AVMetadataObject.ObjectType`: every type AVFoundation names, under the same Swift names
/// (`.code39Mod43`, `.interleaved2of5`, `.gs1DataBarExpanded` ...), and UPC-A besides. The raw values
/// are the spellings of `.pipeline` files (`types=`), of the CLI and of the `code-detected` event's
/// `type` field; `init(named:)` also takes AVFoundation's names (`code39Mod43`, `itf14` ...).
public enum MetadataObjectType: String, Sendable, CaseIterable, Codable, Hashable, Comparable, CustomStringConvertible {
    /// QR Code (`qr`).
    case qr
    /// Micro QR Code (`micro-qr`).
    case microQR = "micro-qr"
    /// Aztec Code (`aztec`), compact and full-range.
    case aztec
    /// PDF417 (`pdf417`), compact PDF417 included.
    case pdf417
    /// MicroPDF417 (`micro-pdf417`).
    case microPDF417 = "micro-pdf417"
    /// Data Matrix (`data-matrix`).
    case dataMatrix = "data-matrix"
    /// EAN-8 (`ean-8`).
    case ean8 = "ean-8"
    /// EAN-13 (`ean-13`).
    case ean13 = "ean-13"
    /// UPC-A (`upc-a`). AVFoundation has no such type and reports UPC-A as EAN-13 with a leading 0;
    /// ask for `ean13` only to get that.
    case upcA = "upc-a"
    /// UPC-E (`upc-e`).
    case upcE = "upc-e"
    /// Code 39 (`code-39`).
    case code39 = "code-39"
    /// Code 39 whose last character is its mod-43 check character (`code-39-mod-43`), as recipe 9-9
    /// asks for. The value keeps the check character. When both Code 39 types are asked for, a code
    /// whose check character is right is reported as this one.
    case code39Mod43 = "code-39-mod-43"
    /// Code 93 (`code-93`).
    case code93 = "code-93"
    /// Code 128 (`code-128`).
    case code128 = "code-128"
    /// Interleaved 2 of 5 (`itf`).
    case interleaved2of5 = "itf"
    /// ITF-14 (`itf-14`): Interleaved 2 of 5 holding a GTIN-14 whose check digit is right. When both
    /// ITF types are asked for, such a code is reported as this one.
    case itf14 = "itf-14"
    /// Codabar (`codabar`); the decoded text keeps its start and stop characters.
    case codabar
    /// GS1 DataBar omnidirectional, stacked included (`databar`); the value is the GTIN-14.
    case gs1DataBar = "databar"
    /// GS1 DataBar Expanded, stacked included (`databar-expanded`); the value is the GS1 element
    /// string with its application identifiers in parentheses.
    case gs1DataBarExpanded = "databar-expanded"
    /// GS1 DataBar Limited (`databar-limited`); the value is the GTIN-14.
    case gs1DataBarLimited = "databar-limited"

    /// Interleaved 2 of 5, by its former Swift name.
    @available(*, deprecated, renamed: "interleaved2of5")
    public static var itf: MetadataObjectType { .interleaved2of5 }
    /// GS1 DataBar, by its former Swift name.
    @available(*, deprecated, renamed: "gs1DataBar")
    public static var databar: MetadataObjectType { .gs1DataBar }

    /// Parses a type name: the `.pipeline` spelling (`qr`, `ean-13`, `code-39-mod-43` ...) or
    /// AVFoundation's (`qr`, `ean13`, `code39Mod43`, `interleaved2of5` ...), in any case. An unknown
    /// name is a typed error that lists the known ones.
    public init(named name: String) throws(BarcodeError) {
        let key = name.trimmingCharacters(in: .whitespaces).lowercased()
        guard let type = MetadataObjectType(rawValue: key) ?? Self.allCases.first(where: { $0.avFoundationName.lowercased() == key }) else {
            throw .unknownType(name: name, known: Self.allCases.map(\.rawValue))
        }
        self = type
    }

    /// The name of the `AVMetadataObject.ObjectType` constant (the Swift case's name; `upcA`, which
    /// AVFoundation lacks, included).
    public var avFoundationName: String {
        switch self {
        case .qr: "qr"
        case .microQR: "microQR"
        case .aztec: "aztec"
        case .pdf417: "pdf417"
        case .microPDF417: "microPDF417"
        case .dataMatrix: "dataMatrix"
        case .ean8: "ean8"
        case .ean13: "ean13"
        case .upcA: "upcA"
        case .upcE: "upce"
        case .code39: "code39"
        case .code39Mod43: "code39Mod43"
        case .code93: "code93"
        case .code128: "code128"
        case .interleaved2of5: "interleaved2of5"
        case .itf14: "itf14"
        case .codabar: "codabar"
        case .gs1DataBar: "gs1DataBar"
        case .gs1DataBarExpanded: "gs1DataBarExpanded"
        case .gs1DataBarLimited: "gs1DataBarLimited"
        }
    }

    /// True for one-dimensional (linear) symbologies, whose bars are read along scan lines.
    public var isLinear: Bool {
        switch self {
        case .qr, .microQR, .aztec, .pdf417, .microPDF417, .dataMatrix: false
        default: true
        }
    }

    /// The symbology a decoder reads this type as: Code 39 for `code39Mod43`, ITF for `itf14` (the
    /// check character or digits tell them apart afterwards); every other type is its own.
    package var family: MetadataObjectType {
        switch self {
        case .code39Mod43: .code39
        case .itf14: .interleaved2of5
        default: self
        }
    }

    /// The type's name as `.pipeline` files and the CLI spell it (the raw value).
    public var description: String { rawValue }

    /// Orders types as `allCases` lists them.
    public static func < (lhs: MetadataObjectType, rhs: MetadataObjectType) -> Bool {
        // Every case is in allCases.
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// One machine-readable code found in a frame, like `AVMetadataMachineReadableCodeObject`.
public struct MetadataMachineReadableCodeObject: Sendable, Hashable, CustomStringConvertible {
    /// The symbology.
    public let type: MetadataObjectType
    /// The decoded text (UTF-8). Check digits that the symbology transmits are included (EAN, UPC,
    /// DataBar's GTIN-14); Codabar keeps its start and stop characters.
    public let stringValue: String
    /// The decoded bytes before any text conversion (the same as the UTF-8 of `stringValue` when a
    /// decoder gives no separate bytes).
    public let rawBytes: [UInt8]
    /// The code's four corners in normalized coordinates of the whole frame (not of the rect of
    /// interest), clockwise from the code's own top-left corner: top-left, top-right, bottom-right,
    /// bottom-left. For a linear code, top-left to top-right is the reading direction.
    public let corners: [NormalizedPoint]
    /// The smallest upright rectangle holding the corners, in normalized frame coordinates.
    public let bounds: NormalizedRect
    /// The presentation time of the frame the code was first read in, in seconds.
    public let timestamp: Double
    /// The decoders that read the code in that frame (`zbar`, `zxing`, or both).
    public let decoders: [BarcodeBackend]

    /// A code; `bounds` is computed from the corners.
    public init(
        type: MetadataObjectType, stringValue: String, rawBytes: [UInt8], corners: [NormalizedPoint],
        timestamp: Double, decoders: [BarcodeBackend]
    ) {
        self.type = type
        self.stringValue = stringValue
        self.rawBytes = rawBytes
        self.corners = corners
        self.timestamp = timestamp
        self.decoders = decoders
        let xs = corners.map(\.x), ys = corners.map(\.y)
        let minX = xs.min() ?? 0, minY = ys.min() ?? 0
        bounds = NormalizedRect(x: minX, y: minY, width: (xs.max() ?? 0) - minX, height: (ys.max() ?? 0) - minY)
    }

    /// The centre of the corners.
    public var center: NormalizedPoint {
        NormalizedPoint(
            x: corners.map(\.x).reduce(0, +) / Double(max(corners.count, 1)),
            y: corners.map(\.y).reduce(0, +) / Double(max(corners.count, 1)))
    }

    /// The type, the decoded text in quotes and the corners: `qr "text" at (x, y) ...`.
    public var description: String { "\(type.rawValue) \"\(stringValue)\" at \(corners.map(\.description).joined(separator: " "))" }
}

/// Which decoder library reads the codes.
public enum BarcodeBackend: String, Sendable, CaseIterable, Codable, Hashable {
    /// The decoder that reads best, for every type: zxing-cpp 3 (zbar read no code of the project's
    /// corpus that zxing-cpp missed, so `auto` no longer runs it beside zxing-cpp).
    case auto
    /// libzbar only: QR and the linear codes.
    case zbar
    /// zxing-cpp only: every type.
    case zxing

    /// The types this backend reads.
    public var availableTypes: Set<MetadataObjectType> {
        switch self {
        case .zbar: Self.zbarTypes
        case .zxing, .auto: Set(MetadataObjectType.allCases)
        }
    }

    /// Checks that this backend reads every one of `types`; the first it does not read is a typed
    /// error naming `object` (who asked) and the types it reads.
    public func checkReads(_ types: [MetadataObjectType], object: String) throws(BarcodeError) {
        let available = availableTypes
        if let missing = types.first(where: { !available.contains($0) }) {
            throw .typeNotAvailable(type: missing.rawValue, object: object, backend: rawValue, available: available.sorted().map(\.rawValue))
        }
    }

    /// What libzbar reads (its PDF417 decoder is incomplete; it has no Aztec, Data Matrix, Micro QR,
    /// MicroPDF417 or DataBar Limited; DataBar Expanded is left to zxing-cpp,
    /// whose values carry the GS1 application identifiers).
    static let zbarTypes: Set<MetadataObjectType> = [
        .qr, .ean8, .ean13, .upcA, .upcE, .code39, .code39Mod43, .code93, .code128, .interleaved2of5, .itf14, .codabar, .gs1DataBar,
    ]
    /// What zbar reads besides zxing-cpp under `auto`: nothing. On the project's corpus (every type in
    /// 9 variants, 640x480 stills) zbar reads no code that zxing-cpp 3 misses, and zxing-cpp reads 86
    /// that zbar misses (`capture bench --only barcode`, "codes zbar reads that zxing-cpp misses"),
    /// while zbar alone costs as much time as zxing-cpp and its GStreamer element misreads tilted EANs.
    package static let zbarAlsoReadsInAuto: Set<MetadataObjectType> = []

    /// Parses a backend name; an unknown one is a typed error.
    public init(named name: String) throws(BarcodeError) {
        guard let backend = BarcodeBackend(rawValue: name.lowercased()) else {
            throw .unknownBackend(name: name, known: Self.allCases.map(\.rawValue))
        }
        self = backend
    }
}
