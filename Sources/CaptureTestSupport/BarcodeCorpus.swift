import Capture
import Foundation

/// A video of machine-readable codes made with independent encoders, with the ground truth of every
/// code: its type, the value a reader must return and where its corners are. It is what the tests of
/// `CaptureMetadataOutput` and the `barcode` benchmark of `capture bench` replay through the `file:`
/// device.
///
/// The codes are drawn by `zint` (every type but QR) and `qrencode` (QR), placed, turned, bent in
/// perspective and blurred by ImageMagick (`magick`, or `convert-im6.q16`), and assembled into an
/// H.264 MP4 by `gst-launch-1.0`. None of the project's decoders take part in making it.
public struct BarcodeCorpus: Sendable, Codable {
    /// One code of a scene, as drawn.
    public struct Code: Sendable, Codable, Hashable {
        public var type: MetadataObjectType
        /// What a reader must return as `stringValue` (check digits included).
        public var value: String
        /// The data given to the encoder.
        public var data: String
        /// What the scene does to the code: `small`, `large`, `tilted`, `rotated-90`, `rotated-180`,
        /// `blurred`, `perspective` ...
        public var variant: String
        /// Size of one module in frame pixels before any turning or bending (the code is shrunk when
        /// it would not fit the frame).
        public var modulePixels: Double
        /// Where the encoder's image landed: its top-left, top-right, bottom-right and bottom-left
        /// corners in normalized frame coordinates. For EAN and UPC the image holds the quiet zones.
        public var corners: [NormalizedPoint]
    }

    /// A run of identical frames showing zero or more codes.
    public struct Scene: Sendable, Codable, Hashable {
        public var name: String
        public var codes: [Code]
        public var firstFrame: Int
        public var frameCount: Int
        /// The frames of the scene.
        public var frames: Range<Int> { firstFrame..<(firstFrame + frameCount) }
        /// The scene's image, a grey PGM (8-bit) of the frame before video compression.
        public var imagePath: String
    }

    /// What to draw: one code.
    public struct CodeSpec: Sendable, Hashable, Codable {
        public var type: MetadataObjectType
        /// Makes the value unique: each serial gives another value of the type.
        public var serial: Int
        public var variant: String
        /// Pixels per module (whole or half pixels).
        public var modulePixels: Double
        /// Clockwise, in degrees.
        public var angle: Double
        /// Tilts the code backwards (its top edge 20% narrower).
        public var perspective: Bool
        /// Light bars on a dark ground (the encoder's image negated, quiet zone included).
        public var inverted = false
        /// A bright reflection (a white ellipse at 60% opacity) over the code's right half.
        public var glare = false
        /// The centre of the code in normalized frame coordinates.
        public var center: NormalizedPoint

        public init(
            type: MetadataObjectType, serial: Int, variant: String = "custom", modulePixels: Double = 3, angle: Double = 0,
            perspective: Bool = false, center: NormalizedPoint = NormalizedPoint(x: 0.5, y: 0.5)
        ) {
            self.type = type
            self.serial = serial
            self.variant = variant
            self.modulePixels = modulePixels
            self.angle = angle
            self.perspective = perspective
            self.center = center
        }
    }

    /// What to draw: one scene.
    public struct SceneSpec: Sendable, Hashable, Codable {
        public var name: String
        public var codes: [CodeSpec]
        public var frames: Int
        /// Gaussian blur of the whole frame (sigma in pixels; 0: sharp).
        public var blur: Double
        /// A code-free image that looks a little like one to a decoder: `text`, `stripes`, `checks`
        /// or `noise`; nil for a plain background.
        public var distractor: String?

        public init(name: String, codes: [CodeSpec], frames: Int, blur: Double = 0, distractor: String? = nil) {
            self.name = name
            self.codes = codes
            self.frames = frames
            self.blur = blur
            self.distractor = distractor
        }
    }

    /// The H.264 MP4 to replay with `file:`.
    public var video: String
    public var frameSize: Size
    public var frameRate: Int
    public var frameCount: Int
    public var scenes: [Scene]

    /// The scene showing frame `index`.
    public func scene(atFrame index: Int) -> Scene? { scenes.first { $0.frames.contains(index) } }

    /// The frame a presentation time falls in.
    public func frame(at timestamp: Double) -> Int { Int((timestamp * Double(frameRate)).rounded()) }

    // MARK: The standard corpus

    /// The variants of `standard`: two sizes upright, then turned a little, by 90 and 180 degrees,
    /// blurred and in perspective.
    public static let standardVariants = ["small", "large", "tilted", "rotated-90", "rotated-180", "blurred", "perspective"]
    /// The harder variants the benchmark adds: inverted (light bars on a dark label) and under a
    /// reflection.
    public static let hardVariants = ["inverted", "glare"]

    /// Every type in every standard variant, one scene each, then code-free distractor scenes.
    /// Linear codes and PDF417 get 2 (small) or 3 (large) pixels per module, matrix codes 3 or 5.
    public static func standard(
        types: [MetadataObjectType] = MetadataObjectType.allCases, framesPerScene: Int = 2,
        variants: [String] = standardVariants, distractors: Bool = true, several: Bool = false
    ) -> [SceneSpec] {
        var scenes: [SceneSpec] = []
        for type in types {
            // PDF417 is as wide as a linear code: it gets a linear code's modules.
            let wide = type.isLinear || type == .pdf417 || type == .microPDF417
            let small: Double = wide ? 2 : 3
            let large: Double = wide ? 3 : 5
            for (index, variant) in variants.enumerated() {
                var code = CodeSpec(type: type, serial: index, variant: variant, modulePixels: large)
                var blur = 0.0
                switch variant {
                case "small": code.modulePixels = small
                case "tilted": code.angle = 8
                case "rotated-90": code.angle = 90
                case "rotated-180": code.angle = 180
                case "blurred": blur = 1.0
                case "perspective":
                    code.perspective = true
                    // DataBar Expanded with two element strings fills the frame at 3 pixels a module; tilted
                    // back that wide, the outline of its bars is no longer the rectangle the reader reports.
                    if type == .gs1DataBarExpanded { code.modulePixels = small }
                case "inverted": code.inverted = true
                case "glare": code.glare = true
                default: break
                }
                scenes.append(SceneSpec(name: "\(type.rawValue)-\(variant)", codes: [code], frames: framesPerScene, blur: blur))
            }
        }
        if several && types.count >= 4 {
            // Several codes in one frame, one in each quarter, of different kinds.
            let picks = [types[0], types[types.count / 3], types[2 * types.count / 3], types[types.count - 1]]
            let places = [(0.27, 0.27), (0.73, 0.27), (0.27, 0.73), (0.73, 0.73)]
            let codes = zip(picks, places).enumerated().map { index, pair in
                CodeSpec(
                    type: pair.0, serial: 50 + index, variant: "several", modulePixels: pair.0.isLinear ? 2 : 3,
                    center: NormalizedPoint(x: pair.1.0, y: pair.1.1))
            }
            scenes.append(SceneSpec(name: "several", codes: codes, frames: framesPerScene))
        }
        if distractors {
            for kind in ["text", "stripes", "checks", "noise"] {
                scenes.append(SceneSpec(name: "distractor-\(kind)", codes: [], frames: framesPerScene, distractor: kind))
            }
        }
        return scenes
    }

    // MARK: Making

    /// Draws the scenes and assembles the video in `directory`, or loads the corpus made there before
    /// from the same scenes and settings. Scenes are drawn in parallel, one per CPU.
    public static func make(
        _ specs: [SceneSpec], in directory: String, frameSize: Size = Size(width: 640, height: 480),
        frameRate: Int = 10
    ) throws(CaptureError) -> BarcodeCorpus {
        let key = fingerprint(specs, frameSize: frameSize, frameRate: frameRate)
        let manifest = (directory as NSString).appendingPathComponent("corpus-\(key).json")
        if let data = FileManager.default.contents(atPath: manifest),
            let corpus = try? JSONDecoder().decode(BarcodeCorpus.self, from: data),
            FileManager.default.fileExists(atPath: corpus.video)
        {
            return corpus
        }
        let work = (directory as NSString).appendingPathComponent("corpus-\(key)")
        try? FileManager.default.removeItem(atPath: work)
        do { try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true) } catch {
            throw .locationNotWritable(path: work, reason: error.localizedDescription)
        }
        let tools = try Tools()
        // One drawing thread per CPU (threads of our own: each mostly waits for ImageMagick).
        let drawn = Locked<[Int: Result<Scene, CaptureError>]>([:])
        let cursor = Locked(0)
        let finished = DispatchSemaphore(value: 0)
        let lanes = max(1, min(ProcessInfo.processInfo.activeProcessorCount, specs.count))
        for _ in 0..<lanes {
            Thread {
                while true {
                    let index = cursor.withLock { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    guard index < specs.count else { break }
                    do throws(CaptureError) {
                        let scene = try draw(specs[index], index: index, in: work, frameSize: frameSize, tools: tools)
                        drawn.withLock { $0[index] = .success(scene) }
                    } catch {
                        drawn.withLock { $0[index] = .failure(error) }
                    }
                }
                finished.signal()
            }.start()
        }
        for _ in 0..<lanes { finished.wait() }
        var scenes: [Scene] = []
        var next = 0
        let results = drawn.withLock { $0 }
        for index in specs.indices {
            guard var scene = try results[index]?.get() else { continue }
            scene.firstFrame = next
            next += scene.frameCount
            scenes.append(scene)
        }
        // Frame files in order (links to the scene images), then the video.
        for scene in scenes {
            let png = (scene.imagePath as NSString).deletingPathExtension + ".png"
            for frame in scene.frames {
                let link = (work as NSString).appendingPathComponent(String(format: "frame_%05d.png", frame))
                do { try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: png) } catch {
                    throw .locationNotWritable(path: link, reason: error.localizedDescription)
                }
            }
        }
        // H.264 at a fixed quantizer of 20: a good camera recording's quality.
        let video = (work as NSString).appendingPathComponent("corpus.mp4")
        try tools.run(
            [
                "gst-launch-1.0", "-q", "multifilesrc", "location=\(work)/frame_%05d.png", "index=0", "stop-index=\(next - 1)",
                "caps=image/png,framerate=\(frameRate)/1", "!", "pngdec", "!", "videoconvert", "!", "video/x-raw,format=I420", "!",
                "x264enc", "pass=quant", "quantizer=20", "speed-preset=ultrafast", "!", "mp4mux", "!", "filesink", "location=\(video)",
            ], making: video)
        let corpus = BarcodeCorpus(video: video, frameSize: frameSize, frameRate: frameRate, frameCount: next, scenes: scenes)
        do {
            let data = try JSONEncoder().encode(corpus)
            let temporary = manifest + ".\(getpid()).tmp"
            try data.write(to: URL(fileURLWithPath: temporary))
            _ = rename(temporary, manifest)
        } catch {
            throw .locationNotWritable(path: manifest, reason: error.localizedDescription)
        }
        return corpus
    }

    /// A stable name for a corpus definition (FNV-1a of its JSON), so a cached corpus is reused only
    /// for the same scenes.
    static func fingerprint(_ specs: [SceneSpec], frameSize: Size, frameRate: Int) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var bytes = (try? encoder.encode(specs)) ?? Data()
        bytes.append(contentsOf: Array("\(frameSize)@\(frameRate)#v3".utf8))
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// The external programs, located once.
    struct Tools: Sendable {
        let imageMagick: [String]
        /// The font of the `text` distractor, from Debian's fonts-dejavu-core.
        static let textFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

        init() throws(CaptureError) {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            func find(_ name: String) -> String? {
                if name.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
                return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
            }
            // Not a bare `convert`: on some machines that name is another program.
            if let magick = find("magick") {
                imageMagick = [magick]
            } else if let im6 = find("convert-im6.q16") ?? find("/usr/bin/convert-im6.q16") {
                imageMagick = [im6]
            } else {
                throw .elementMissing(factory: "ImageMagick (magick or convert-im6.q16)", neededBy: "the barcode corpus")
            }
            for tool in ["zint", "qrencode", "gst-launch-1.0"] where find(tool) == nil {
                throw .elementMissing(factory: tool, neededBy: "the barcode corpus")
            }
            guard FileManager.default.isReadableFile(atPath: Self.textFont) else {
                throw .elementMissing(factory: "the font \(Self.textFont) (Debian package fonts-dejavu-core)", neededBy: "the barcode corpus")
            }
        }

        func run(_ arguments: [String], making product: String) throws(CaptureError) {
            let result: (status: Int32, output: String, error: String, cpuSeconds: Double)
            do { result = try ChildProcess(arguments).finish() } catch {
                throw .pipelineBuildFailed(object: "the barcode corpus", reason: "\(arguments[0]) could not start: \(error)")
            }
            // zint exits with 1...4 for warnings (the symbol is still made), 5 and up for errors.
            let succeeded = result.status == 0 || (arguments[0] == "zint" && result.status < 5)
            guard succeeded else {
                throw .pipelineBuildFailed(
                    object: "the barcode corpus", reason: "\(arguments.joined(separator: " ")) failed (\(result.status)): \(result.error)\(result.output)")
            }
            guard FileManager.default.fileExists(atPath: product) else {
                throw .pipelineBuildFailed(object: "the barcode corpus", reason: "\(arguments[0]) made no \(product)")
            }
        }
    }

    /// Draws one scene: its codes, placed on a lightly noisy background, then the frame as PGM and PNG.
    private static func draw(_ spec: SceneSpec, index: Int, in work: String, frameSize: Size, tools: Tools) throws(CaptureError) -> Scene {
        let base = (work as NSString).appendingPathComponent(String(format: "scene_%04d", index))
        var arguments =
            tools.imageMagick + [
                "-size", "\(frameSize.width)x\(frameSize.height)", "xc:#e9e9e9",
                "-seed", "\(index + 1)", "-attenuate", "0.25", "+noise", "Gaussian",
            ]
        arguments += distractor(spec.distractor, frameSize: frameSize, seed: index)
        var codes: [Code] = []
        for (number, code) in spec.codes.enumerated() {
            let (data, value, encoder) = payload(code)
            let image = "\(base)_code\(number).png"
            if code.type == .qr {
                try tools.run(["qrencode", "-o", image, "-s", "\(Int(code.modulePixels.rounded()))", "-m", "0", "-l", "M", data], making: image)
            } else {
                var command = ["zint", "-b", encoder, "--scale=\(code.modulePixels / 2)", "--notext", "-o", image, "-d", data]
                if code.type.isLinear && !code.type.isDataBar { command.append("--height=24") }
                // Code 39 with its mod-43 check character.
                if code.type == .code39Mod43 { command.append("--vers=1") }
                if code.type == .dataMatrix { command.append("--square") }
                // Eight rows of 4 modules, as PDF417 labels usually have (zint would make 3 for this little data).
                if code.type == .pdf417 { command += ["--rows=8", "--height=4", "--heightperrow"] }
                // Rows of 4 modules (with 3, ImageMagick 6 aborts bending one of them in perspective).
                if code.type == .microPDF417 { command += ["--height=4", "--heightperrow"] }
                try tools.run(command, making: image)
            }
            guard let size = pngSize(image) else {
                throw .pipelineBuildFailed(object: "the barcode corpus", reason: "cannot read the size of \(image)")
            }
            let inset = code.inverted ? ((code.type.isLinear ? 10 : 4) * code.modulePixels).rounded() : 0
            let outer = place(code, width: Double(size.width) + 2 * inset, height: Double(size.height) + 2 * inset, frame: frameSize)
            let width = Double(size.width), height = Double(size.height)
            // The code's own corners inside the bordered image (bilinear: the inverted variant is not bent).
            let corners = [(inset, inset), (inset + width, inset), (inset + width, inset + height), (inset, inset + height)].map { point in
                let u = point.0 / (width + 2 * inset), v = point.1 / (height + 2 * inset)
                let top = (x: outer[0].x + (outer[1].x - outer[0].x) * u, y: outer[0].y + (outer[1].y - outer[0].y) * u)
                let bottom = (x: outer[3].x + (outer[2].x - outer[3].x) * u, y: outer[3].y + (outer[2].y - outer[3].y) * u)
                return (x: top.x + (bottom.x - top.x) * v, y: top.y + (bottom.y - top.y) * v)
            }
            let control = zip([(0.0, 0.0), (width + 2 * inset, 0.0), (width + 2 * inset, height + 2 * inset), (0.0, height + 2 * inset)], outer)
                .map { source, target in String(format: "%.2f,%.2f %.3f,%.3f", source.0, source.1, target.x, target.y) }
                .joined(separator: "  ")
            // An inverted label keeps a quiet zone, dark like its ground: 4 modules (10 for a linear code).
            let border = code.inverted ? Int(((code.type.isLinear ? 10 : 4) * code.modulePixels).rounded()) : 0
            arguments += ["(", image] + (code.inverted ? ["-bordercolor", "white", "-border", "\(border)", "-negate"] : [])
            arguments += [
                "-alpha", "set", "-virtual-pixel", "transparent", "-define",
                "distort:viewport=\(frameSize.width)x\(frameSize.height)+0+0", "-distort", "Perspective", control, ")",
                "-compose", "over", "-composite",
            ]
            if code.glare {
                // An ellipse of light over the right half of the code, as a lamp on a glossy label.
                let xs = corners.map(\.x), ys = corners.map(\.y)
                let width = (xs.max() ?? 0) - (xs.min() ?? 0), height = (ys.max() ?? 0) - (ys.min() ?? 0)
                let cx = xs.reduce(0, +) / 4 + width / 5, cy = ys.reduce(0, +) / 4
                arguments += ["-fill", "rgba(255,255,255,0.6)", "-draw", String(format: "ellipse %.1f,%.1f %.1f,%.1f 0,360", cx, cy, width / 4, height / 3)]
            }
            codes.append(
                Code(
                    type: code.type, value: value, data: data, variant: code.variant, modulePixels: code.modulePixels,
                    corners: corners.map { NormalizedPoint(x: $0.x / Double(frameSize.width), y: $0.y / Double(frameSize.height)) }))
        }
        if spec.blur > 0 { arguments += ["-blur", "0x\(spec.blur)"] }
        arguments += ["-colorspace", "Gray", "-depth", "8", "-write", "\(base).pgm", "\(base).png"]
        try tools.run(arguments, making: "\(base).png")
        return Scene(name: spec.name, codes: codes, firstFrame: 0, frameCount: spec.frames, imagePath: "\(base).pgm")
    }

    /// ImageMagick drawing commands for a code-free distractor.
    private static func distractor(_ kind: String?, frameSize: Size, seed: Int) -> [String] {
        var generator = SplitMix64(seed: UInt64(seed) &+ 0x5eed)
        let width = frameSize.width, height = frameSize.height
        switch kind {
        case "text":
            // A font file named by path (fonts-dejavu-core, in the install list): ImageMagick's own
            // default font names ("helvetica") map to files only some machines have.
            return [
                "-font", Tools.textFont, "-fill", "#202020", "-pointsize", "22",
                "-annotate", "+30+120", "INVOICE 2024-0042   TOTAL 1234.56 EUR",
                "-annotate", "+30+200", "Ref: A1234B  |||  0123456789  ||| lllIIII",
                "-annotate", "+30+280", "Shipping to 42 Wallaby Way, Sydney 2000",
            ]
        case "stripes":
            // Bars of random widths: the raw material of a linear code, without its structure.
            var commands = ["-fill", "#151515"]
            var x = width / 8
            while x < width * 7 / 8 {
                let bar = Int(generator.next() % 6) + 1
                commands += ["-draw", "rectangle \(x),\(height / 3) \(x + bar),\(height * 2 / 3)"]
                x += bar + Int(generator.next() % 6) + 1
            }
            return commands
        case "checks":
            var commands = ["-fill", "#151515"]
            let cell = 8
            for row in stride(from: height / 4, to: height * 3 / 4, by: cell) {
                for column in stride(from: width / 4, to: width * 3 / 4, by: cell) where generator.next() % 2 == 0 {
                    commands += ["-draw", "rectangle \(column),\(row) \(column + cell - 1),\(row + cell - 1)"]
                }
            }
            return commands
        case "noise":
            return ["-attenuate", "3", "+noise", "Impulse"]
        default:
            return []
        }
    }

    /// Where the encoder's image corners go in the frame (pixels): turned about the code's centre,
    /// tilted back when asked, shrunk if it would not fit.
    static func place(_ code: CodeSpec, width: Double, height: Double, frame: Size) -> [(x: Double, y: Double)] {
        var local = [(-width / 2, -height / 2), (width / 2, -height / 2), (width / 2, height / 2), (-width / 2, height / 2)]
        if code.perspective {
            local[0] = (local[0].0 * 0.8, local[0].1 * 0.9)
            local[1] = (local[1].0 * 0.8, local[1].1 * 0.9)
        }
        let radians = code.angle * .pi / 180
        let cosine = cos(radians), sine = sin(radians)
        var turned = local.map { (x: $0.0 * cosine - $0.1 * sine, y: $0.0 * sine + $0.1 * cosine) }
        let center = (x: code.center.x * Double(frame.width), y: code.center.y * Double(frame.height))
        // Keep 4 pixels of margin inside the frame.
        var scale = 1.0
        for point in turned {
            if point.x != 0 { scale = min(scale, (point.x > 0 ? Double(frame.width) - 4 - center.x : center.x - 4) / abs(point.x)) }
            if point.y != 0 { scale = min(scale, (point.y > 0 ? Double(frame.height) - 4 - center.y : center.y - 4) / abs(point.y)) }
        }
        turned = turned.map { (x: $0.x * scale, y: $0.y * scale) }
        return turned.map { (x: center.x + $0.x, y: center.y + $0.y) }
    }

    /// The width and height in a PNG's header.
    static func pngSize(_ path: String) -> Size? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let header = [UInt8](handle.readData(ofLength: 24))
        guard header.count == 24, header[1] == 0x50, header[2] == 0x4E, header[3] == 0x47 else { return nil }
        func big(_ at: Int) -> Int { header[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return Size(width: big(16), height: big(20))
    }

    // MARK: Values

    /// The data for the encoder, the value a reader returns, and zint's name for the symbology.
    static func payload(_ code: CodeSpec) -> (data: String, value: String, zint: String) {
        let n = code.serial
        func digits(_ value: Int, _ count: Int) -> String { String(format: "%0\(count)d", value % Int(pow(10, Double(count)))) }
        switch code.type {
        case .qr: return ("QR capture \(n)", "QR capture \(n)", "QRCODE")
        case .microQR: return ("MQR\(n)", "MQR\(n)", "MICROQR")
        case .aztec: return ("Aztec \(n)", "Aztec \(n)", "AZTEC")
        case .pdf417: return ("PDF417 \(n)", "PDF417 \(n)", "PDF417")
        case .dataMatrix: return ("DataMatrix \(n)", "DataMatrix \(n)", "DATAMATRIX")
        case .ean8:
            let payload = "400" + digits(n, 4)
            return (payload, payload + gtinCheckDigit(payload), "EANX")
        case .ean13:
            let payload = "400638" + digits(n, 6)
            return (payload, payload + gtinCheckDigit(payload), "EANX")
        case .upcA:
            let payload = "03600" + digits(n, 6)
            return (payload, payload + gtinCheckDigit(payload), "UPCA")
        case .upcE:
            // Number system 0, ending in 5: manufacturer d1...d5 (d5 not 0), product 0000 5.
            let six = "1" + digits(n, 3) + String(n % 9 + 1) + "5"
            let expanded = "0" + six.prefix(5) + "0000" + "5"
            return ("0" + six, "0" + six + gtinCheckDigit(expanded), "UPCE")
        case .code39: return ("CAP-\(n)", "CAP-\(n)", "CODE39")
        case .code39Mod43:
            let payload = "M43-\(n)"
            return (payload, payload + code39CheckCharacter(payload), "CODE39")
        case .code93: return ("C93-\(n)", "C93-\(n)", "CODE93")
        case .code128: return ("Cap128-\(n)", "Cap128-\(n)", "CODE128")
        case .interleaved2of5:
            let payload = "1234" + digits(n, 4)
            return (payload, payload, "C25INTER")
        case .itf14:
            let payload = "1540014" + digits(n, 6)
            return (payload, payload + gtinCheckDigit(payload), "ITF14")
        case .codabar:
            let payload = "A40" + digits(n, 4) + "B"
            return (payload, payload, "CODABAR")
        case .gs1DataBar:
            let payload = "2001234" + digits(n, 6)
            return (payload, payload + gtinCheckDigit(payload), "DBAR_OMN")
        case .gs1DataBarLimited:
            let payload = "1501234" + digits(n, 6)
            return (payload, payload + gtinCheckDigit(payload), "DBAR_LTD")
        case .gs1DataBarExpanded:
            // A GTIN and a net weight (AI 3103: kilograms with 3 decimals), as on a pack of meat.
            let gtin = "0950110" + digits(n, 6)
            let gtin14 = gtin + gtinCheckDigit(gtin)
            let weight = digits(1000 + n * 37, 6)
            return ("[01]\(gtin14)[3103]\(weight)", "01\(gtin14)3103\(weight)", "DBAR_EXP")
        case .microPDF417: return ("uPDF \(n)", "uPDF \(n)", "MICROPDF417")
        }
    }

    /// Code 39's mod-43 check character of `payload` (characters of Code 39's alphabet).
    public static func code39CheckCharacter(_ payload: String) -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%")
        let sum = payload.reduce(0) { $0 + (alphabet.firstIndex(of: $1) ?? 0) }
        return String(alphabet[sum % 43])
    }

    /// The GS1 mod-10 check digit of a GTIN payload (weights 3, 1, 3 ... from the right).
    public static func gtinCheckDigit(_ payload: String) -> String {
        var sum = 0
        for (index, character) in payload.reversed().enumerated() {
            sum += (character.wholeNumberValue ?? 0) * (index % 2 == 0 ? 3 : 1)
        }
        return String((10 - sum % 10) % 10)
    }
}

/// A small seeded generator (SplitMix64): the same sequence in every run, for generated corpora and
/// fuzz tests.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension MetadataObjectType {
    /// The GS1 DataBar types: zint draws them at their own height.
    fileprivate var isDataBar: Bool { self == .gs1DataBar || self == .gs1DataBarLimited || self == .gs1DataBarExpanded }
}
