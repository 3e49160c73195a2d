import Capture
import CaptureTestSupport
import Foundation
import PipelineFile

@testable import CaptureServer

#if canImport(Glibc)
    import Glibc
#endif

/// A response as the test client read it.
struct RawResponse {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
}

/// A TCP connection to 127.0.0.1 (tests never reach further), with a receive timeout (10 s by default).
final class TestConnection {
    let descriptor: Int32

    init(port: UInt16, host: String = "127.0.0.1", receiveBuffer: Int32? = nil, timeout seconds: Int = 10) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw TestFailure("cannot connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Up to `count` bytes; empty at the end of the stream or on timeout.
    func receive(_ count: Int = 65536) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, count, 0) }
        return read > 0 ? Array(buffer[..<read]) : []
    }

    /// Reads until `predicate` holds for what came so far, the stream ends, or `limit` bytes came.
    func receive(until predicate: ([UInt8]) -> Bool, limit: Int = 8 << 20) -> [UInt8] {
        var all: [UInt8] = []
        while all.count < limit && !predicate(all) {
            let chunk = receive()
            if chunk.isEmpty { break }
            all += chunk
        }
        return all
    }

    /// Everything until the server closes.
    func receiveAll() -> [UInt8] { receive(until: { _ in false }) }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Sends raw bytes as a request and reads the whole response (the server closes after each).
func rawRequest(_ port: UInt16, _ bytes: [UInt8]) throws -> RawResponse {
    let connection = try TestConnection(port: port)
    connection.send(bytes)
    return parseResponse(connection.receiveAll())
}

/// A request with the usual headers.
func request(_ port: UInt16, _ method: String = "GET", _ target: String, body: String? = nil, headers: [String: String] = [:]) throws -> RawResponse {
    var text = "\(method) \(target) HTTP/1.1\r\n" + (headers["Host"] == nil ? "Host: 127.0.0.1:\(port)\r\n" : "")
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    if let body { text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
    text += "\r\n" + (body ?? "")
    return try rawRequest(port, Array(text.utf8))
}

func parseResponse(_ bytes: [UInt8]) -> RawResponse {
    guard let end = find([13, 10, 13, 10], in: bytes) else { return RawResponse(status: 0, headers: [:], body: bytes) }
    let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    var headers: [String: String] = [:]
    for line in head.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return RawResponse(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
}

func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int = 0) -> Int? {
    guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
    for index in start...(bytes.count - needle.count) where bytes[index] == needle[0] && Array(bytes[index..<(index + needle.count)]) == needle {
        return index
    }
    return nil
}

/// Counts JPEG images (SOI markers after a part's blank line) in an MJPEG stream read so far.
func jpegParts(in bytes: [UInt8]) -> Int {
    var count = 0, index = 0
    while let found = find([13, 10, 13, 10, 0xFF, 0xD8], in: bytes, from: index) {
        count += 1
        index = found + 6
    }
    return count
}

/// A server around a running test-pattern session, in a scratch folder, torn down by `stop()`.
final class ServedSession: @unchecked Sendable {
    // @unchecked: set once in init; the run task is only awaited in stop().
    let folder: String
    let server: CaptureWebServer
    let runner: ScenarioRunner
    private var run: Task<ScenarioResult, Never>?

    init(
        pipeline: String = ServedSession.testPipeline, listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 0), token: String? = nil,
        limits: HTTPLimits = HTTPLimits(), remoteAccess: RemoteAccess = .outputFolderOnly,
        catalog: (@Sendable (_ mediaFolder: String) -> MediaCatalog)? = nil
    ) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("capture-serve-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let document = try PipelineDocument.parse(pipeline, file: "test.pipeline")
        runner = ScenarioRunner(
            document: document,
            options: ScenarioRunner.Options(
                outputDirectory: folder + "/media", outlivesSession: true, remoteAccess: remoteAccess, videoMode: CaptureWebServer.Names.videoMode()))
        var configuration = CaptureWebServer.Configuration(
            mediaDirectory: folder + "/media", listen: listen, token: token, limits: limits,
            previewSize: Size(width: 320, height: 240))
        configuration.previewQuality = 60
        server = try CaptureWebServer(controller: { [runner] in runner.controller }, configuration: configuration, catalog: catalog?(folder + "/media"))
        try server.start()
        let runner = self.runner, server = self.server
        run = Task { await runner.run { server.publish(jsonLine: $0.jsonLine) } }
        // Bounded: the session starts within a few seconds on a loaded machine.
        _ = await waitUntil { runner.session?.isRunning ?? false }
    }

    var port: UInt16 { server.address.port }

    func stop() async {
        runner.requestStop()
        _ = await run?.value
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    static let testPipeline = """
        session, preset=cif352x288
        input, name=camera, device=test-pattern
        output, name=photo, kind=photo, codec=jpeg, location="IMG_%04d.jpg"
        """
}

/// Waits (bounded in count) until `condition` holds.
func eventually(_ tries: Int = 200, every interval: Duration = .milliseconds(50), _ condition: () throws -> Bool) async rethrows -> Bool {
    try await waitUntil(timeout: interval * tries, every: interval, condition)
}

/// Runs blocking work (socket reads, waits on semaphores) on a thread of its own: a test never holds one
/// of the Swift pool's few threads, which the server's tasks need.
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
