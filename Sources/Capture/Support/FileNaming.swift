import Foundation

/// Where captured files go: `%d`-style patterns number successive files, an existing file is never
/// overwritten, and a file appears at its final name only once it is complete.
public enum FileNaming {
    /// True when the location holds a printf-style integer directive (`IMG_%04d.jpg`).
    public static func isPattern(_ location: String) -> Bool {
        location.range(of: "%[0-9]*d", options: .regularExpression) != nil
    }

    /// Formats a pattern with a number (`IMG_%04d.jpg`, 7 → `IMG_0007.jpg`).
    public static func format(_ pattern: String, _ number: Int) -> String {
        guard let range = pattern.range(of: "%[0-9]*d", options: .regularExpression) else { return pattern }
        let directive = String(pattern[range])
        let width = Int(directive.dropFirst().dropLast()) ?? 0
        let zeroPad = directive.hasPrefix("%0")
        var digits = String(number)
        if digits.count < width { digits = String(repeating: zeroPad ? "0" : " ", count: width - digits.count) + digits }
        return pattern.replacingCharacters(in: range, with: digits)
    }

    /// The candidate names for a location, in order: a pattern numbers from `start`; a plain name is
    /// itself first, then `name-1.ext`, `name-2.ext` ...
    public static func candidate(_ location: String, _ index: Int, start: Int = 1) -> String {
        if isPattern(location) { return format(location, start + index) }
        guard index > 0 else { return location }
        let url = URL(fileURLWithPath: location)
        let ext = url.pathExtension
        let base = url.deletingPathExtension().path
        return ext.isEmpty ? "\(base)-\(index)" : "\(base)-\(index).\(ext)"
    }

    /// The first candidate that does not exist yet.
    public static func nextFree(_ location: String, start: Int = 1) -> String {
        var index = 0
        while FileManager.default.fileExists(atPath: candidate(location, index, start: start)) { index += 1 }
        return candidate(location, index, start: start)
    }

    /// Makes the folder that will hold `location` (and its parents) and checks it can be written;
    /// returns the folder. The one check every output runs before it writes a file there.
    @discardableResult
    static func prepareFolder(for location: String) throws(CaptureError) -> String {
        let directory = URL(fileURLWithPath: location).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .locationNotWritable(path: location, reason: "cannot create the directory \(directory): \(error.localizedDescription)")
        }
        guard access(directory, W_OK) == 0 else {
            throw .locationNotWritable(path: location, reason: String(cString: strerror(errno)))
        }
        return directory
    }

    /// Writes the bytes atomically under the first free name for `location` and returns the path:
    /// a temporary file in the same directory, then a hard link to the final name (which fails rather
    /// than replace an existing file, so a name taken meanwhile moves on to the next number).
    public static func writeNew(_ bytes: [UInt8], to location: String) throws(CaptureError) -> String {
        let directory = try prepareFolder(for: location)
        let temporary = "\(directory)/.capture-\(getpid())-\(UUID().uuidString).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .locationNotWritable(path: location, reason: String(cString: strerror(errno))) }
        var written = 0
        let failure: Int32? = bytes.withUnsafeBytes { raw -> Int32? in
            while written < raw.count {
                // `raw` is not empty while bytes remain to be written, so it has a base address.
                let result = write(fd, raw.baseAddress! + written, raw.count - written)
                if result < 0 { if errno == EINTR { continue }; return errno }
                written += result
            }
            return fsync(fd) == 0 ? nil : errno
        }
        close(fd)
        if let failure {
            unlink(temporary)
            if failure == ENOSPC || failure == EDQUOT { throw .diskFull(path: location) }
            throw .locationNotWritable(path: location, reason: String(cString: strerror(failure)))
        }
        defer { unlink(temporary) }
        var index = 0
        while true {
            let path = candidate(location, index)
            if link(temporary, path) == 0 { return path }
            if errno != EEXIST { throw .locationNotWritable(path: path, reason: String(cString: strerror(errno))) }
            index += 1
        }
    }
}
