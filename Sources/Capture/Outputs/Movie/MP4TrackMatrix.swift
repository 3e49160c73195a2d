import Foundation

/// Writes a turn into an MP4 or MOV file's video track matrix (`tkhd`), the way iOS stores a movie's
/// orientation: the pixels stay as recorded and players turn them (ffprobe shows a display matrix,
/// "rotation of -90.00 degrees" for a quarter turn clockwise). GStreamer 1.22's mp4mux and qtmux do
/// not write the `image-orientation` tag into the matrix, so the finished file's header is changed
/// in place: 36 bytes of each video track's `tkhd`, nothing else moved or resized.
enum MP4TrackMatrix {
    /// The matrix of a clockwise turn of a `width` x `height` track (ISO/IEC 14496-12: a, b, u, c, d,
    /// v, x, y, w; 16.16 fixed point, u, v, w 2.30).
    static func matrix(rotation: Int, width: Int, height: Int) -> [Int32] {
        let one: Int32 = 0x0001_0000, w: Int32 = 0x4000_0000
        let (x, y) = (Int32(clamping: width) << 16, Int32(clamping: height) << 16)
        switch rotation {
        case 90: return [0, one, 0, -one, 0, 0, y, 0, w]
        case 180: return [-one, 0, 0, 0, -one, 0, x, y, w]
        case 270: return [0, -one, 0, one, 0, 0, 0, x, w]
        default: return [one, 0, 0, 0, one, 0, 0, 0, w]
        }
    }

    /// Sets the matrix of every video track of the file at `path` to a clockwise turn of `rotation`
    /// degrees. Returns how many tracks it wrote; 0 when the file has no video track header it can
    /// read (nothing is written then).
    @discardableResult
    static func write(rotation: Int, to path: String) -> Int {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return 0 }
        let file = MovieFileScan.Reader(fd: fd, size: Int64(info.st_size))
        var written = 0
        for moov in boxes(file, in: 0..<file.size) where moov.type == "moov" {
            for trak in boxes(file, in: moov.body) where trak.type == "trak" {
                let children = boxes(file, in: trak.body)
                guard isVideo(file, children), let tkhd = children.first(where: { $0.type == "tkhd" }),
                    let version = file.bytes(at: tkhd.body.lowerBound, count: 1)?.first
                else { continue }
                // After version and flags: times, track id, duration (v1: 64-bit), reserved, layer,
                // group, volume, reserved; then the matrix, then width and height (16.16).
                let matrixOffset = tkhd.body.lowerBound + (version == 1 ? 52 : 40)
                guard let size = file.bytes(at: matrixOffset + 36, count: 8) else { continue }
                let width = Int(be(size[0..<4]) >> 16), height = Int(be(size[4..<8]) >> 16)
                var bytes: [UInt8] = []
                for value in matrix(rotation: rotation, width: width, height: height) {
                    bytes += withUnsafeBytes(of: value.bigEndian) { Array($0) }
                }
                if bytes.withUnsafeBytes({ pwrite(fd, $0.baseAddress, 36, off_t(matrixOffset)) }) == 36 { written += 1 }
            }
        }
        if written > 0 { fsync(fd) }
        return written
    }

    private struct Box {
        var type: String
        var body: Range<Int64>
    }

    /// The boxes laid end to end in `range` (a box that runs past it ends the list).
    private static func boxes(_ file: MovieFileScan.Reader, in range: Range<Int64>) -> [Box] {
        var found: [Box] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound, found.count < 10_000, let header = file.bytes(at: offset, count: 8) {
            var size = Int64(be(header[0..<4]))
            var headerSize: Int64 = 8
            if size == 1, let large = file.bytes(at: offset + 8, count: 8) {
                size = Int64(bitPattern: be(large[0..<8]))
                headerSize = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= headerSize, offset + size <= range.upperBound else { break }
            found.append(Box(type: String(decoding: header[4..<8], as: UTF8.self), body: offset + headerSize..<offset + size))
            offset += size
        }
        return found
    }

    /// True when a track's `mdia` has a `hdlr` of type `vide`.
    private static func isVideo(_ file: MovieFileScan.Reader, _ trak: [Box]) -> Bool {
        guard let mdia = trak.first(where: { $0.type == "mdia" }), let hdlr = boxes(file, in: mdia.body).first(where: { $0.type == "hdlr" }),
            let handler = file.bytes(at: hdlr.body.lowerBound + 8, count: 4)
        else { return false }
        return String(decoding: handler, as: UTF8.self) == "vide"
    }

    private static func be(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
}
