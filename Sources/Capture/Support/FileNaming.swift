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

    /// The widest number directive a location may hold (`%09d`): wider ones would ask for absurd names.
    static let maximumDirectiveWidth = 9

    /// Checks a location a user gave before anything is written: it names a file (not empty, not a
    /// folder, not an existing device, pipe or folder), and holds at most one number directive — `%d`,
    /// `%Nd` or `%0Nd` with N up to 9 — and no other `%`, so a location can never act as a printf
    /// format. `pattern`: a directive is required (image sequences).
    public static func checkLocation(_ location: String, pattern required: Bool = false) throws(CaptureError) {
        guard !location.isEmpty else { throw .invalidLocation(path: location, reason: "it is empty; name a file, e.g. photo.jpg") }
        guard !location.hasSuffix("/"), ![".", ".."].contains(location.split(separator: "/", omittingEmptySubsequences: false).last ?? "") else {
            throw .invalidLocation(
                path: location, reason: "it names a folder; name a file in it, e.g. \(location.hasSuffix("/") ? location : location + "/")photo.jpg")
        }
        if let kind = notARegularFile(location) {
            throw .invalidLocation(path: location, reason: "it is \(kind); captures are written to regular files")
        }
        guard !location.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw .invalidLocation(path: location, reason: "it holds a control character (a newline, a tab ...)")
        }
        // Bytes, not characters: a '%' followed by a combining mark is one character that is not "%",
        // yet printf would still read the '%'.
        let bytes = Array(location.utf8)
        let percents = bytes.indices.filter { bytes[$0] == UInt8(ascii: "%") }
        guard percents.count <= 1 else {
            throw .invalidLocation(path: location, reason: "it holds \(percents.count) '%'; a location holds at most one number directive (%d, %05d)")
        }
        if let percent = percents.first {
            let digits = bytes[(percent + 1)...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            let end = percent + 1 + digits.count
            guard end < bytes.count, bytes[end] == UInt8(ascii: "d") else {
                throw .invalidLocation(path: location, reason: "'%' must start a number directive such as %d or %05d; other printf directives are not allowed")
            }
            guard digits.count <= 2, (Int(String(decoding: digits, as: UTF8.self)) ?? 0) <= maximumDirectiveWidth else {
                throw .invalidLocation(path: location, reason: "the number directive is wider than \(maximumDirectiveWidth) digits")
            }
            if required && bytes[percent...].contains(UInt8(ascii: "/")) {
                throw .invalidLocation(path: location, reason: "the number directive must be in the file name, not in a folder name")
            }
        } else if required {
            throw .invalidLocation(path: location, reason: "it needs a number directive (e.g. frames/%05d.png) to number the files")
        }
    }

    /// The number after the highest one already used in the folder of a pattern whose directive is in
    /// the file name (`frames/img_%03d.png` with img_000 ... img_041 there: 42); 0 when none is. A
    /// numbering that starts there overwrites nothing an earlier run wrote.
    public static func nextIndex(for pattern: String) -> Int {
        let url = URL(fileURLWithPath: pattern)
        let name = url.lastPathComponent
        guard let range = name.range(of: "%[0-9]*d", options: .regularExpression),
            let entries = try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
        else { return 0 }
        let prefix = name[..<range.lowerBound], suffix = name[range.upperBound...]
        var highest = -1
        for entry in entries where entry.hasPrefix(prefix) && entry.hasSuffix(suffix) && entry.count > prefix.count + suffix.count {
            let middle = entry.dropFirst(prefix.count).dropLast(suffix.count)
            if middle.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(middle), number > highest { highest = number }
        }
        return highest + 1
    }

    /// A path as text that cannot break a line of output: control characters are escaped (\n, \t, \u{1B}).
    public static func printable(_ path: String) -> String {
        var text = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            default: text += scalar.value < 0x20 || scalar.value == 0x7f ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }
        }
        return text
    }

    /// True when something (a file, a link, a device ...) is at the path.
    static func existsAsAnything(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// What is at the path when it is there and is not a regular file ("a directory", "a device" ...);
    /// nil for a regular file or nothing.
    static func notARegularFile(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFLNK: return "a symbolic link"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFIFO: return "a pipe"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
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
        try writeNew(bytes, to: location, firstIndex: 0, durable: true).path
    }

    /// Writes the bytes under the first name from candidate `firstIndex` on that nobody holds
    /// (`candidate(location, index)`), claimed atomically: the bytes go to a temporary file, which is
    /// then hard-linked to the name; a link fails rather than replace a file, so two writers (threads
    /// or processes) never take the same name, and a name appears only once its file is whole.
    /// Returns the path and the candidate index it took. `durable`: the bytes reach the disk
    /// (`fsync`) before the name appears.
    static func writeNew(
        _ bytes: [UInt8], to location: String, firstIndex: Int, start: Int = 1, durable: Bool
    ) throws(CaptureError) -> (
        path: String, index: Int
    ) {
        let directory = try prepareFolder(for: location)
        let temporary = TemporaryFiles.make(in: directory, extension: "tmp")
        defer { TemporaryFiles.forget(temporary) }
        try writeTemporary(bytes, at: temporary, for: location, durable: durable)
        defer { unlink(temporary) }
        var index = firstIndex
        while true {
            let path = candidate(location, index, start: start)
            if link(temporary, path) == 0 { return (path, index) }
            if errno != EEXIST { throw .locationNotWritable(path: path, reason: String(cString: strerror(errno))) }
            index += 1
        }
    }

    /// Writes the bytes at `location` itself, replacing the regular file there, if any: what an output
    /// whose `overwritesExistingFile` is set does with a plain location. The bytes go to a temporary
    /// file in the folder that is then renamed over the name, so the old file stays whole until the
    /// new one takes its place. Anything there that is not a regular file (a folder, a symbolic link,
    /// a device, a pipe) is refused with `invalidLocation`, and replaced never. Returns the path.
    public static func writeReplacing(_ bytes: [UInt8], to location: String) throws(CaptureError) -> String {
        if let kind = notARegularFile(location) {
            throw .invalidLocation(path: location, reason: "it is \(kind); only a regular file is replaced")
        }
        let directory = try prepareFolder(for: location)
        let temporary = TemporaryFiles.make(in: directory, extension: "tmp")
        defer { TemporaryFiles.forget(temporary) }
        try writeTemporary(bytes, at: temporary, for: location, durable: true)
        guard rename(temporary, location) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .locationNotWritable(path: location, reason: reason)
        }
        return location
    }

    /// Writes the bytes to a new temporary file (which must not exist); removes it and throws when
    /// they cannot all be written (`diskFull`, `locationNotWritable` naming `location`).
    private static func writeTemporary(_ bytes: [UInt8], at temporary: String, for location: String, durable: Bool) throws(CaptureError) {
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
            return !durable || fsync(fd) == 0 ? nil : errno
        }
        close(fd)
        if let failure {
            unlink(temporary)
            if failure == ENOSPC || failure == EDQUOT { throw .diskFull(path: location) }
            throw .locationNotWritable(path: location, reason: String(cString: strerror(failure)))
        }
    }

    /// The prefix of every temporary file this program makes next to a destination:
    /// `.capture-PID-UUID.EXT`. The PID says whose it is, so a later run can tell the files a process
    /// that no longer exists left behind (`removeStaleTemporaries`).
    static let temporaryPrefix = ".capture-"

    /// A new temporary file name in `directory`, owned by this process (`.capture-PID-UUID.EXT`).
    static func temporaryName(in directory: String, extension pathExtension: String) -> String {
        "\(directory)/\(temporaryPrefix)\(getpid())-\(UUID().uuidString).\(pathExtension)"
    }
}
