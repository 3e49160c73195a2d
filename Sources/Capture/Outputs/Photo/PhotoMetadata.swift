import Foundation

/// Writes a photo's tags: as a GStreamer tag list for jifmux (which writes EXIF into JPEG files),
/// and as PNG text chunks.
enum PhotoMetadata {
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// The serialized GstTagList for jifmux.
    static func tagList(_ tags: [String: String]) -> String {
        var fields: [String] = []
        func string(_ key: String, _ tag: String) {
            if let value = tags[key] { fields.append("\(tag)=(string)\(quote(value))") }
        }
        func double(_ key: String, _ tag: String) {
            if let value = tags[key].flatMap(Double.init) { fields.append("\(tag)=(double)\(value)") }
        }
        if let date = tags["DateTime"] { fields.append("datetime=(datetime)\(date)") }
        string("Make", "device-manufacturer")
        string("Model", "device-model")
        string("Software", "application-name")
        let orientation = tags["Orientation"].flatMap(Int.init).flatMap(PixelTurn.imageOrientation(exif:)) ?? "rotate-0"
        fields.append("image-orientation=(string)\(orientation)")
        // EXIF Flash: fired or not, and the mode (GStreamer's names: always, never, auto).
        if let flash = tags["Flash"] { fields.append("capturing-flash-fired=(boolean)\(flash == "fired")") }
        if let mode = tags["FlashMode"] {
            fields.append("capturing-flash-mode=(string)\(mode == "on" ? "always" : mode == "off" ? "never" : "auto")")
        }
        string("Description", "description")
        string("Comment", "comment")
        double("GPSLatitude", "geo-location-latitude")
        double("GPSLongitude", "geo-location-longitude")
        double("GPSAltitude", "geo-location-elevation")
        return "taglist, " + fields.joined(separator: ", ")
    }

    static func quote(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Inserts a JPEG comment segment (COM) after the APPn segments: GStreamer's EXIF writer has no
    /// user comment, and COM is what exiftool and ImageMagick show as the file's comment.
    static func addingJPEGComment(_ comment: String?, to jpeg: [UInt8]) -> [UInt8] {
        guard let comment, jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return jpeg }
        var offset = 2
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF, (0xE0...0xEF).contains(jpeg[offset + 1]) {
            offset += 2 + (Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3]))
        }
        guard offset <= jpeg.count else { return jpeg }
        let text = Array(comment.utf8.prefix(65_000))
        let length = text.count + 2
        let segment: [UInt8] = [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + text
        return Array(jpeg[..<offset]) + segment + Array(jpeg[offset...])
    }

    /// Inserts one tEXt chunk per tag after the PNG header chunk.
    static func addingPNGText(_ tags: [String: String], to png: [UInt8]) -> [UInt8] {
        // Signature (8) + IHDR chunk (4 length + 4 type + 13 data + 4 CRC).
        let headerEnd = 33
        guard png.count > headerEnd, png[12..<16].elementsEqual("IHDR".utf8) else { return png }
        var chunks: [UInt8] = []
        for (key, value) in tags.sorted(by: { $0.key < $1.key }) {
            let keyword = Array(key.utf8.prefix(79))
            let text = Array(value.utf8).map { $0 < 0x20 && $0 != 0x0A ? 0x20 : $0 }
            let data = keyword + [0] + text
            var chunk = bigEndian(UInt32(data.count))
            let body = Array("tEXt".utf8) + data
            chunk += body
            chunk += bigEndian(crc32(body))
            chunks += chunk
        }
        return Array(png[..<headerEnd]) + chunks + Array(png[headerEnd...])
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
