import Foundation

/// Reads how far a movie file being written has come, from its container's structure on disk: does
/// it hold a whole video frame yet? A few `pread`s of box and element headers, nothing decoded and no
/// pipeline: cheap enough to ask four times a second while a recording starts, also on a slow machine.
///
/// - MP4/MOV (ISO boxes): a `moof` followed by its whole `mdat` (a fragment: fragments start at a key
///   frame), or, unfragmented, an `mdat` with data and the `moov` that indexes it.
/// - Matroska/WebM (EBML): a whole `SimpleBlock` or `BlockGroup` of a video track inside a `Cluster`
///   (the first block of a recording's video is its first key frame).
enum MovieFileScan {
    /// True when the file holds at least one whole video frame a player can show.
    static func holdsVideoFrame(_ path: String, container: MovieContainer) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        let file = Reader(fd: fd, size: Int64(info.st_size))
        switch container {
        case .mp4, .mov: return isoHoldsFrame(file)
        case .mkv, .webm: return matroskaHoldsFrame(file)
        }
    }

    /// Reads bytes at offsets of an open file (`pread`: the writer's offset is not moved).
    struct Reader {
        let fd: Int32
        let size: Int64

        func bytes(at offset: Int64, count: Int) -> [UInt8]? {
            guard offset >= 0, count > 0, offset + Int64(count) <= size else { return nil }
            var buffer = [UInt8](repeating: 0, count: count)
            let read = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return read == count ? buffer : nil
        }
    }

    // MARK: ISO boxes

    static func isoHoldsFrame(_ file: Reader) -> Bool {
        var offset: Int64 = 0
        var sawMoof = false, sawMoov = false, sawMediaData = false
        // A bounded walk: a recording's first fragment comes within its first few boxes.
        for _ in 0..<10_000 {
            guard let header = file.bytes(at: offset, count: 8) else { return false }
            var size = Int64(be(header[0..<4]))
            let type = String(decoding: header[4..<8], as: UTF8.self)
            var headerSize: Int64 = 8
            if size == 1 {
                guard let large = file.bytes(at: offset + 8, count: 8) else { return false }
                size = Int64(bitPattern: be(large[0..<8]))
                headerSize = 16
            }
            // Size 0 (to the end of the file) is a box still being written; a size below its header is damage.
            guard size >= headerSize, offset + size <= file.size else { return false }
            switch type {
            case "moof": sawMoof = true
            case "moov": sawMoov = true
            case "mdat" where size > headerSize:
                if sawMoof { return true }
                sawMediaData = true
            default: break
            }
            if sawMoov && sawMediaData { return true }
            offset += size
        }
        return false
    }

    private static func be(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    // MARK: EBML (Matroska, WebM)

    private static let segment: UInt32 = 0x1853_8067
    private static let tracks: UInt32 = 0x1654_AE6B
    private static let trackEntry: UInt32 = 0xAE
    private static let trackNumber: UInt32 = 0xD7
    private static let trackType: UInt32 = 0x83
    private static let cluster: UInt32 = 0x1F43_B675
    private static let simpleBlock: UInt32 = 0xA3
    private static let blockGroup: UInt32 = 0xA0
    private static let block: UInt32 = 0xA1

    /// An element's header: its ID, the size of its data (nil: unknown, a live cluster) and where the
    /// data starts.
    struct Element {
        var id: UInt32
        var size: Int64?
        var dataStart: Int64
    }

    /// The element header at `offset`, when the file holds all of it.
    static func element(_ file: Reader, at offset: Int64) -> Element? {
        guard let first = file.bytes(at: offset, count: 1), first[0] != 0 else { return nil }
        let idLength = first[0].leadingZeroBitCount + 1
        guard idLength <= 4, let idBytes = file.bytes(at: offset, count: idLength) else { return nil }
        let id = UInt32(be(idBytes[0..<idLength]))
        guard let sizeFirst = file.bytes(at: offset + Int64(idLength), count: 1), sizeFirst[0] != 0 else { return nil }
        let sizeLength = sizeFirst[0].leadingZeroBitCount + 1
        guard let sizeBytes = file.bytes(at: offset + Int64(idLength), count: sizeLength) else { return nil }
        var value = UInt64(sizeBytes[0] & (0xFF >> UInt8(sizeLength)))
        for byte in sizeBytes.dropFirst() { value = value << 8 | UInt64(byte) }
        let unknown = value == (UInt64(1) << UInt64(7 * sizeLength)) - 1
        return Element(id: id, size: unknown ? nil : Int64(value), dataStart: offset + Int64(idLength + sizeLength))
    }

    /// An unsigned integer element's value.
    private static func unsigned(_ file: Reader, _ element: Element) -> UInt64? {
        guard let size = element.size, (1...8).contains(size), let bytes = file.bytes(at: element.dataStart, count: Int(size)) else { return nil }
        return be(bytes[0..<bytes.count])
    }

    static func matroskaHoldsFrame(_ file: Reader) -> Bool {
        // The EBML header, then the segment.
        guard let header = element(file, at: 0), let headerSize = header.size,
            let top = element(file, at: header.dataStart + headerSize), top.id == segment
        else { return false }
        var videoTracks = Set<UInt64>()
        var offset = top.dataStart
        for _ in 0..<10_000 {
            guard let child = element(file, at: offset) else { return false }
            switch child.id {
            case tracks:
                guard let size = child.size, child.dataStart + size <= file.size else { return false }
                videoTracks = videoTrackNumbers(file, from: child.dataStart, to: child.dataStart + size)
            case cluster:
                switch walkCluster(file, from: child.dataStart, to: child.size.map { child.dataStart + $0 } ?? file.size, videoTracks: videoTracks) {
                case .video: return true
                case .nextCluster(let next):
                    offset = next
                    continue
                case .end: return false
                }
            default:
                guard child.size != nil else { return false }
            }
            offset = child.dataStart + (child.size ?? 0)
        }
        return false
    }

    /// What a walk through a cluster's children found.
    private enum ClusterWalk {
        /// A whole block of a video track.
        case video
        /// No such block; the next cluster starts here.
        case nextCluster(Int64)
        /// No such block, and the file (so far) ends in this cluster.
        case end
    }

    private static func videoTrackNumbers(_ file: Reader, from start: Int64, to end: Int64) -> Set<UInt64> {
        var numbers = Set<UInt64>()
        var offset = start
        while offset < end, let entry = element(file, at: offset), let size = entry.size {
            if entry.id == trackEntry {
                var number: UInt64?, type: UInt64?
                var inner = entry.dataStart
                while inner < entry.dataStart + size, let field = element(file, at: inner), let fieldSize = field.size {
                    if field.id == trackNumber { number = unsigned(file, field) }
                    if field.id == trackType { type = unsigned(file, field) }
                    inner = field.dataStart + fieldSize
                }
                if let number, type == 1 { numbers.insert(number) }
            }
            offset = entry.dataStart + size
        }
        return numbers
    }

    /// Walks the cluster's data `start..<end` (a cluster still being written has an unknown size and
    /// runs to the next cluster, or to the end of the file) for a whole block of a video track.
    private static func walkCluster(_ file: Reader, from start: Int64, to end: Int64, videoTracks: Set<UInt64>) -> ClusterWalk {
        var offset = start
        while offset < min(end, file.size), let child = element(file, at: offset) {
            // The next cluster (after one of unknown size) ends this one.
            if child.id == cluster { return .nextCluster(offset) }
            guard let size = child.size, child.dataStart + size <= file.size else { return .end }
            switch child.id {
            case simpleBlock:
                if isVideo(file, blockAt: child.dataStart, videoTracks: videoTracks) { return .video }
            case blockGroup:
                var inner = child.dataStart
                while inner < child.dataStart + size, let field = element(file, at: inner), let fieldSize = field.size {
                    if field.id == block, isVideo(file, blockAt: field.dataStart, videoTracks: videoTracks) { return .video }
                    inner = field.dataStart + fieldSize
                }
            default: break
            }
            offset = child.dataStart + size
        }
        return offset < file.size ? .nextCluster(offset) : .end
    }

    /// A block's track number (its first bytes, an EBML variable-length integer) is a video track's.
    private static func isVideo(_ file: Reader, blockAt offset: Int64, videoTracks: Set<UInt64>) -> Bool {
        guard let first = file.bytes(at: offset, count: 1), first[0] != 0 else { return false }
        let length = first[0].leadingZeroBitCount + 1
        guard let bytes = file.bytes(at: offset, count: length) else { return false }
        var number = UInt64(bytes[0] & (0xFF >> UInt8(length)))
        for byte in bytes.dropFirst() { number = number << 8 | UInt64(byte) }
        return videoTracks.contains(number)
    }
}
