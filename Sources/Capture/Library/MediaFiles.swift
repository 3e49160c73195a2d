import Foundation
import GStreamer

/// What the library and the editors need to know about a file before they touch it.
enum MediaFiles {
    /// The size of a JPEG or PNG image read from its header, with its format ("jpeg", "png"); nil for
    /// anything else (or a header cut short).
    static func imageHeader(_ bytes: [UInt8]) -> (format: String, width: Int, height: Int)? {
        if bytes.count >= 24, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
            bytes[12..<16].elementsEqual("IHDR".utf8)
        {
            func be32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
            let (width, height) = (be32(16), be32(20))
            return width > 0 && height > 0 ? ("png", width, height) : nil
        }
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        // Walk the markers to the first start-of-frame (SOF0-SOF15 but DHT, JPG and DAC).
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue }
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { index += 2; continue }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                let width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                return width > 0 && height > 0 ? ("jpeg", width, height) : nil
            }
            if marker == 0xDA || marker == 0xD9 { return nil }
            index += 2 + length
        }
        return nil
    }

    /// The first bytes of a file (enough for an image header), or nil when it cannot be read as a
    /// regular file.
    static func head(_ path: String, bytes count: Int = 256 * 1024) -> [UInt8]? {
        guard FileNaming.notARegularFile(path) == nil || isRegularThroughLink(path) else { return nil }
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: count) else { return [] }
        return Array(data)
    }

    private static func isRegularThroughLink(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// Probes a file for the editors and the library: it must be a regular file GStreamer reads as
    /// media with a duration. Throws `notAMediaFile` naming the file and the cause.
    static func probe(_ path: String, needsVideo: Bool) throws(CaptureError) -> MediaInfo {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .notAMediaFile(path: path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .notAMediaFile(path: path, reason: FileNaming.notARegularFile(path) ?? "it is not a regular file")
        }
        guard info.st_size > 0 else { throw .notAMediaFile(path: path, reason: "it is empty") }
        guard access(path, R_OK) == 0 else { throw .notAMediaFile(path: path, reason: String(cString: strerror(errno))) }
        guard let media = MediaInfo.discover(path) else {
            throw .notAMediaFile(path: path, reason: "GStreamer cannot read it as audio or video (not media, or truncated before its streams are described)")
        }
        if needsVideo {
            guard let video = media.video, video.width > 0, video.height > 0 else {
                throw .notAMediaFile(path: path, reason: "it has no video stream")
            }
            guard media.video?.codec?.hasPrefix("image/") != true else {
                throw .notAMediaFile(path: path, reason: "it is a still image, not a video")
            }
            guard media.duration > 0 && media.duration != UInt64.max else {
                throw .notAMediaFile(path: path, reason: "it has no duration (truncated, or a live stream)")
            }
        }
        return media
    }

    /// Reads the whole file through its demuxer (`filesrc ! parsebin`, nothing decoded) and returns
    /// where its media ends: the latest end (time stamp plus duration) of a buffer of any stream, in
    /// nanoseconds; nil when the demuxer fails before the end of the file or it cannot be read in
    /// `timeout`. A file whose header promises more than its data holds (an MP4 cut short after its
    /// index) ends early here. Blocking: call it off the concurrency pool.
    static func demuxedEnd(_ path: String, timeout: Duration) -> UInt64? {
        let end = Locked<UInt64>(0)
        guard let pipeline = try? Pipeline.make(name: "media-scan"),
            let source = try? Element.make("filesrc"), let parse = try? Element.make("parsebin"),
            (try? source.set("location", path)) != nil, (try? pipeline.add(source)) != nil, (try? pipeline.add(parse)) != nil,
            (try? source.link(to: parse)) != nil
        else { return nil }
        defer {
            _ = try? pipeline.setState(.null)
            pipeline.bus.setFlushing(true)
        }
        parse.onPadAdded { pad in
            guard let sink = try? Element.make("fakesink"), (try? sink.set("sync", "false")) != nil,
                (try? sink.set("async", "false")) != nil, (try? pipeline.add(sink)) != nil, let sinkPad = sink.staticPad("sink"),
                (try? pad.link(to: sinkPad)) != nil
            else { return }
            _ = try? sink.syncStateWithParent()
            pad.addProbe([.buffer]) { pad, info in
                if let buffer = info.buffer, let pts = buffer.pts, let time = pad.streamTime(of: pts) {
                    let last = time + (buffer.duration ?? 0)
                    end.withLock { $0 = max($0, last) }
                }
                return .ok
            }
        }
        guard (try? pipeline.setState(.playing)) != nil else { return nil }
        let finish = ContinuousClock.now + timeout
        while ContinuousClock.now < finish {
            guard let message = pipeline.bus.pop(timeout: 200_000_000, kinds: [.eos, .error]) else { continue }
            return message.kind == .eos ? end.value : nil
        }
        return nil
    }

    /// Copies a file into `location` (a name, numbered `name-1.ext` ... when taken) without ever
    /// replacing a file: the bytes go to a temporary file in the destination folder, are flushed to
    /// disk, then hard-linked to the first free name. Returns the path. Nothing is left behind on failure.
    static func copyNew(from source: String, to location: String) throws(CaptureError) -> String {
        let directory = try FileNaming.prepareFolder(for: location)
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .notAMediaFile(path: source, reason: String(cString: strerror(errno))) }
        defer { close(input) }
        let temporary = TemporaryFiles.make(in: directory, extension: "tmp")
        defer { TemporaryFiles.forget(temporary) }
        let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw .locationNotWritable(path: location, reason: String(cString: strerror(errno))) }
        defer { unlink(temporary) }
        var failure: Int32?
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        copying: while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 { if errno == EINTR { continue }; failure = errno; break }
            if count == 0 { break }
            var written = 0
            while written < count {
                let result = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                if result < 0 { if errno == EINTR { continue }; failure = errno; break copying }
                written += result
            }
        }
        if failure == nil, fsync(output) != 0 { failure = errno }
        close(output)
        if let failure {
            if failure == ENOSPC || failure == EDQUOT { throw .diskFull(path: location) }
            throw .locationNotWritable(path: location, reason: String(cString: strerror(failure)))
        }
        return try linkNew(temporary, to: location)
    }

    /// Hard-links a finished temporary file to the first free name for `location` (never replacing
    /// one); the caller removes the temporary name.
    static func linkNew(_ temporary: String, to location: String) throws(CaptureError) -> String {
        var index = 0
        while true {
            let path = FileNaming.candidate(location, index)
            if link(temporary, path) == 0 { return path }
            if errno != EEXIST { throw .locationNotWritable(path: path, reason: String(cString: strerror(errno))) }
            index += 1
        }
    }

    /// A temporary name in the folder of `location` (made, and checked writable), for a file a
    /// GStreamer sink writes before it is linked to its final name. It is registered with
    /// `TemporaryFiles` (removed should the process be told to end); `TemporaryFiles.forget` it once
    /// it is unlinked.
    static func temporary(for location: String, extension ext: String) throws(CaptureError) -> String {
        let directory = try FileNaming.prepareFolder(for: location)
        return TemporaryFiles.make(in: directory, extension: ext)
    }
}

/// Runs blocking work (file copies, GStreamer pipelines driven to their end) on a thread of its own,
/// so that the caller's task suspends instead of holding a thread of the concurrency pool.
func runBlocking<T: Sendable>(_ label: String, _ work: @escaping @Sendable () throws(CaptureError) -> T) async throws(CaptureError) -> T {
    let result: Result<T, CaptureError> = await withCheckedContinuation { continuation in
        let thread = Thread {
            do throws(CaptureError) { continuation.resume(returning: .success(try work())) } catch { continuation.resume(returning: .failure(error)) }
        }
        thread.name = label
        thread.start()
    }
    return try result.get()
}
