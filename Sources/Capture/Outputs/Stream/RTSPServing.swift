import CGstRTSPServer
import CStreamShim
import Foundation
import GStreamer

/// The process's RTSP servers, one per address and port, each on a thread of its own (GStreamer's RTSP
/// server library with its own GLib main context). Stream outputs mount a path on one; the server stops
/// when its last path is unmounted. Several sessions (or outputs) serve different paths of one port.
final class RTSPServers: Sendable {
    static let shared = RTSPServers()

    private struct Server: @unchecked Sendable {
        // @unchecked: the pointer is used only under `RTSPServers.servers`' lock or by the mount that
        // holds a count on it; the C server locks its own tables.
        let pointer: OpaquePointer
        var mounts: Int
    }

    private let servers = Locked<[String: Server]>([:])

    /// Mounts `url`'s path on the server for its address and port, starting the server when it is the
    /// first path. Typed errors: `streamServerFailed` (the port cannot be bound, the path is served
    /// already).
    func mount(_ url: StreamURL, audio: MovieAudioCodec?, peers: @escaping @Sendable (Bool, String) -> Void) throws(CaptureError) -> RTSPMount {
        do { try GStreamer.initialize() } catch { throw CaptureError(error, object: "the RTSP server") }
        let key = url.hostAndPort
        let result: Result<RTSPMount, CaptureError> = servers.withLock { servers in
            var server: Server
            if let running = servers[key] {
                server = running
            } else {
                var message: UnsafeMutablePointer<CChar>?
                guard let started = capture_rtsp_server_start(url.host, Int32(url.port), &message) else {
                    let reason = message.map { String(cString: $0) } ?? "the server could not listen"
                    g_free(message)
                    return .failure(.streamServerFailed(url: url.description, reason: reason))
                }
                server = Server(pointer: started, mounts: 0)
            }
            let box = Unmanaged.passRetained(PeerBox(peers)).toOpaque()
            let audioCode: Int32 =
                switch audio {
                case .aac?: 1;
                case .opus?: 2;
                default: 0
                }
            guard let mount = capture_rtsp_mount_add(server.pointer, url.path, audioCode, peerTrampoline, box, peerBoxRelease) else {
                Unmanaged<PeerBox>.fromOpaque(box).release()
                if server.mounts == 0 { capture_rtsp_server_stop(server.pointer) }
                return .failure(
                    .streamServerFailed(url: url.description, reason: "the path \(url.path) is served already by another stream output of this process"))
            }
            server.mounts += 1
            servers[key] = server
            return .success(RTSPMount(pointer: mount, key: key, port: Int(capture_rtsp_server_port(server.pointer))))
        }
        return try result.get()
    }

    /// Unmounts the path (closing its clients) and stops the server when no path is left.
    fileprivate func unmount(_ mount: RTSPMount) {
        servers.withLock { servers in
            capture_rtsp_mount_remove(mount.pointer)
            guard var server = servers[mount.key] else { return }
            server.mounts -= 1
            if server.mounts == 0 {
                capture_rtsp_server_stop(server.pointer)
                servers[mount.key] = nil
            } else {
                servers[mount.key] = server
            }
        }
    }
}

/// A served path. Samples pushed into it reach every client of the path.
final class RTSPMount: @unchecked Sendable {
    // @unchecked: the C mount locks its list of medias; `removed` is behind a lock.
    fileprivate let pointer: OpaquePointer
    fileprivate let key: String
    /// The port the server listens on.
    let port: Int
    private let removed = Locked(false)

    fileprivate init(pointer: OpaquePointer, key: String, port: Int) {
        self.pointer = pointer
        self.key = key
        self.port = port
    }

    /// Hands an encoded sample (video or audio) to the path's clients; true when one of them waits for
    /// a key frame.
    func push(_ sample: SampleView, audio: Bool) -> Bool {
        // The lock keeps `remove()` from freeing the C mount while a streaming thread pushes.
        removed.withLock { removed in
            guard !removed else { return false }
            return capture_rtsp_mount_push(pointer, sample.pointer, audio ? 1 : 0) != 0
        }
    }

    /// Medias (groups of clients sharing one) the path feeds now.
    var mediaCount: Int { removed.withLock { $0 ? 0 : Int(capture_rtsp_mount_media_count(pointer)) } }

    func remove() {
        let first = removed.withLock { removed in
            defer { removed = true }
            return !removed
        }
        if first { RTSPServers.shared.unmount(self) }
    }

    deinit { remove() }
}

/// What a C peer callback reaches: a Swift closure (a client or an SRT caller came or went).
final class PeerBox: Sendable {
    let body: @Sendable (Bool, String) -> Void
    init(_ body: @escaping @Sendable (Bool, String) -> Void) { self.body = body }
}

/// Runs on the RTSP server's thread (or srtsink's): posts and returns.
let peerTrampoline: capture_stream_peer_callback = { context, connected, address in
    guard let context else { return }
    Unmanaged<PeerBox>.fromOpaque(context).takeUnretainedValue().body(connected != 0, address.map { String(cString: $0) } ?? "")
}

let peerBoxRelease: GDestroyNotify = { context in
    guard let context else { return }
    Unmanaged<PeerBox>.fromOpaque(context).release()
}
