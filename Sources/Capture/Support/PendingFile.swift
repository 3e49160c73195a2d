import CGStreamerShim
import Foundation
import GStreamer

/// A file that is written under a temporary name next to its destination and takes its final name
/// only once it holds something a reader can use (`publish()`): a process killed before that leaves
/// no file under the final name, and a file it was asked to replace stays whole until then.
///
/// - The temporary name is `.capture-PID-UUID.EXT` in the destination's folder (`FileNaming`): a
///   later run removes those of processes that no longer exist (`TemporaryFiles.removeStale`).
/// - Publishing is atomic. Without overwriting, the final name is claimed with a hard link, which
///   fails rather than replace a file: a name taken meanwhile moves on to the next free one
///   (`name-1.mp4`, or the pattern's next number). Overwriting links a second temporary name and
///   renames it over the destination, so the old file is replaced whole, never truncated.
/// - The temporary name stays, as a second link to the same file, until `finish`: should another
///   writer replace the published file meanwhile (two recordings overwriting one name), this
///   writer's file is still there and is given the next free name then; two writers never share a file.
final class PendingFile: Sendable {
    private struct State {
        var location: String
        var published = false
        var finished = false
        /// Why a file to keep could not be given its name (`finish`): it stays under the temporary one.
        var unnamed: CaptureError?
    }

    /// The name the sink writes to until `finish`.
    let temporary: String
    /// The destination asked for (a `%d` pattern numbers from `firstIndex`).
    let requested: String
    let overwrite: Bool
    private let firstIndex: Int
    private let state: Locked<State>
    /// The file's identity (device and inode), to tell it from another writer's at the same name.
    private let identity: (dev: UInt64, ino: UInt64)

    /// Makes the temporary file for `requested` (a path; a `%d` pattern is numbered from the first
    /// free number), and decides the name it will get: the first free candidate. `overwrite`: a
    /// plain name that exists is replaced when the file is published.
    init(requested: String, overwrite: Bool, extension pathExtension: String) throws(CaptureError) {
        let directory = try FileNaming.prepareFolder(for: requested)
        let isPattern = FileNaming.isPattern(requested)
        self.requested = requested
        self.overwrite = overwrite && !isPattern
        var index = 0
        if !self.overwrite {
            while FileNaming.existsAsAnything(FileNaming.candidate(requested, index)) {
                guard isPattern else { throw .fileAlreadyExists(path: requested) }
                index += 1
            }
        } else if let kind = FileNaming.notARegularFile(requested) {
            throw .locationNotWritable(path: requested, reason: "it is \(kind), not a regular file; only regular files are replaced")
        }
        firstIndex = index
        let temporary = TemporaryFiles.make(in: directory, extension: pathExtension.isEmpty ? "tmp" : pathExtension)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            let error = errno
            TemporaryFiles.forget(temporary)
            if error == ENOSPC || error == EDQUOT { throw .diskFull(path: requested) }
            throw .locationNotWritable(path: requested, reason: String(cString: strerror(error)))
        }
        var info = stat()
        fstat(fd, &info)
        close(fd)
        self.temporary = temporary
        identity = (UInt64(info.st_dev), UInt64(info.st_ino))
        state = Locked(State(location: FileNaming.candidate(requested, index)))
    }

    /// The file's name: the one it has once published, else the one it is expected to get.
    var location: String { state.withLock { $0.location } }

    /// True once the file has its final name.
    var isPublished: Bool { state.withLock { $0.published } }

    /// Gives the file its final name (once; later calls return it). Returns the name.
    @discardableResult
    func publish() throws(CaptureError) -> String {
        try state.withLock { state throws(CaptureError) -> String in
            guard !state.published else { return state.location }
            // Ended meanwhile (removed, or given its name by `finish`): nothing to publish.
            guard !state.finished else { throw .locationNotWritable(path: state.location, reason: "the file was already finished") }
            state.location = try place(replacing: overwrite)
            state.published = true
            return state.location
        }
    }

    /// Ends the file. `keep`: it holds something usable, so it gets its final name if it has none
    /// yet (or, when another writer replaced it at that name, the next free one); otherwise it is
    /// removed, and a final name it had is taken back only while it is still this file's.
    /// The temporary name is removed either way, but for a file to keep that could not be given a
    /// name (its folder was made read-only, say): that one stays under the temporary name, made
    /// read-only so that no later run takes it for a stale temporary (`unnamedError` says why).
    /// Returns where the file is under its final name, or nil when it has none.
    @discardableResult
    func finish(keep: Bool) -> String? {
        state.withLock { state -> String? in
            guard !state.finished else { return state.published ? state.location : nil }
            state.finished = true
            defer {
                if state.unnamed == nil { unlink(temporary) }
                TemporaryFiles.forget(temporary)
            }
            guard FileNaming.existsAsAnything(temporary) else {
                // The temporary name was removed (its folder, by someone): nothing to keep.
                return nil
            }
            if !keep {
                if state.published && isThisFile(state.location) { unlink(state.location) }
                state.published = false
                return nil
            }
            if state.published && isThisFile(state.location) { return state.location }
            if state.published && !FileNaming.existsAsAnything(state.location) {
                // Removed by someone after it was published: that is their decision.
                state.published = false
                return nil
            }
            // Not published yet, or another writer's file now has the name: the next free one.
            let placed: String
            do throws(CaptureError) {
                placed = try place(replacing: overwrite && !state.published)
            } catch {
                state.unnamed = error
                state.published = false
                chmod(temporary, 0o444)
                return nil
            }
            state.location = placed
            state.published = true
            return placed
        }
    }

    /// Why the finished file, to be kept, could not be given its name (it is under `temporary`).
    var unnamedError: CaptureError? { state.withLock { $0.unnamed } }

    /// True when `path` is this file (same device and inode), not another one at the same name.
    func isThisFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && UInt64(info.st_dev) == identity.dev && UInt64(info.st_ino) == identity.ino
    }

    /// Links the temporary file to its final name: replacing (a second link renamed over the
    /// destination) or claiming the first free candidate (a link that fails on an existing name).
    private func place(replacing: Bool) throws(CaptureError) -> String {
        if replacing {
            if let kind = FileNaming.notARegularFile(requested) {
                throw .locationNotWritable(path: requested, reason: "it is \(kind), not a regular file; only regular files are replaced")
            }
            let directory = (requested as NSString).deletingLastPathComponent
            let second = TemporaryFiles.make(in: directory, extension: "tmp")
            defer { TemporaryFiles.forget(second) }
            guard link(temporary, second) == 0 else { throw .locationNotWritable(path: requested, reason: String(cString: strerror(errno))) }
            guard rename(second, requested) == 0 else {
                let error = errno
                unlink(second)
                throw .locationNotWritable(path: requested, reason: String(cString: strerror(error)))
            }
            return requested
        }
        var index = firstIndex
        while true {
            let path = FileNaming.candidate(requested, index)
            if link(temporary, path) == 0 { return path }
            if errno != EEXIST { throw .locationNotWritable(path: path, reason: String(cString: strerror(errno))) }
            index += 1
        }
    }
}

/// The temporary files this process makes next to destinations (`.capture-PID-UUID.EXT`): the ones
/// still there are removed when the process is asked to end (`removeAll`, from a SIGINT/SIGTERM
/// handler), and a later run removes those of processes that no longer exist (`removeStale`).
public enum TemporaryFiles {
    private static let live = Locked<Set<String>>([])
    private static let swept = Locked<Set<String>>([])

    /// A new temporary name in `directory`, registered until `forget`. Before its first name in a
    /// folder, the process removes the stale temporaries there.
    static func make(in directory: String, extension pathExtension: String) -> String {
        removeStale(in: directory)
        let path = FileNaming.temporaryName(in: directory, extension: pathExtension)
        live.withLock { _ = $0.insert(path) }
        return path
    }

    /// The file is finished with (linked to its name, or removed): no longer this process's to remove.
    static func forget(_ path: String) {
        live.withLock { _ = $0.remove(path) }
    }

    /// Removes every temporary file this process still has (a command interrupted by a signal).
    /// Returns how many were removed.
    @discardableResult
    public static func removeAll() -> Int {
        let paths = live.withLock { paths -> Set<String> in
            defer { paths.removeAll() }
            return paths
        }
        return paths.filter { unlink($0) == 0 }.count
    }

    /// Removes, once per folder and process, the temporary files in `directory` that a process which
    /// no longer exists left behind (killed mid-trim, mid-photo or mid-recording). Only names of this
    /// program's form (`.capture-PID-UUID.EXT`, a regular file) whose PID is not a running process are
    /// removed: a file of a running process, a read-only one (kept on purpose), or any other file, is
    /// left alone. A recording that was given its final name keeps it (the temporary name is a second
    /// link to it).
    @discardableResult
    public static func removeStale(in directory: String) -> Int {
        let folder = directory.isEmpty ? "." : directory
        guard swept.withLock({ $0.insert(folder).inserted }) else { return 0 }
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return 0 }
        var removed = 0
        for entry in entries {
            guard let pid = owner(of: entry), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let path = "\(folder)/\(entry)"
            // A file its owner could not write is one a run kept on purpose (`PendingFile.finish`: a
            // recording that could not be given its name), not a leftover.
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IWUSR != 0 else { continue }
            guard FileNaming.notARegularFile(path) == nil, unlink(path) == 0 else { continue }
            removed += 1
        }
        return removed
    }

    /// The PID in a temporary name of this program (`.capture-PID-UUID.EXT`), nil for any other name.
    static func owner(of name: String) -> pid_t? {
        guard name.hasPrefix(FileNaming.temporaryPrefix) else { return nil }
        let rest = name.dropFirst(FileNaming.temporaryPrefix.count)
        guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else { return nil }
        let tail = rest[rest.index(after: dash)...]
        // A UUID (36 characters: 8-4-4-4-12 hexadecimal digits), a dot, an extension.
        let uuid = tail.prefix(36)
        guard uuid.count == 36, UUID(uuidString: String(uuid)) != nil, tail.dropFirst(36).first == ".", tail.count > 37 else { return nil }
        return pid
    }
}

/// The process's standard output, for command-line tools.
public enum StandardOutput {
    /// Writes standard output a line at a time, also into a file or a pipe: a command stopped by a
    /// signal, or killed, has written every whole line it printed.
    public static func useLineBuffering() { capture_stdout_line_buffered() }
}
