import Capture
import Dispatch
import Foundation
import Testing

@testable import CaptureServer

#if canImport(Glibc)
    import Glibc
#endif

/// The findings of issue #25, each against the server on 127.0.0.1 over real sockets: what a client or
/// the media folder does never holds the Swift pool, a partial request is answered 408, a trickled
/// request costs work linear in its size, and a stream's place comes back as soon as its client leaves.
@Suite("HTTP server hardening", .serialized)
struct HTTPHardeningTests {
    /// `mkfifo media/f.mp4`, then several downloads of it at once: each is refused at once (a FIFO is
    /// never opened), and the API answers meanwhile.
    @Test func aFIFOInTheMediaFolderHoldsNothingUp() async throws {
        let served = try await ServedSession()
        let fifo = served.folder + "/media/f.mp4"
        #expect(mkfifo(fifo, 0o600) == 0)
        // Should downloads wait in open() (the fault this test is about), a writer kept open until the
        // server stops lets them go, and the test ends.
        let writer = Locked<Int32>(-1)
        defer {
            Task {
                await served.stop()
                if writer.value >= 0 { close(writer.value) }
            }
        }
        let port = served.port
        let (downloads, status) = try await onThread { () -> ([RawResponse], RawResponse) in
            let downloads = RequestsAtOnce(4, port: port, target: "/media/f.mp4")
            // Bounded: a download that waits in open() never answers (its connection gives up after 10 s).
            _ = downloads.finished.wait(timeout: .now() + 15)
            let status = try statusWithin5s(port)
            writer.value = open(fifo, O_RDWR | O_NONBLOCK)
            return (downloads.responses.value, status)
        }
        #expect(status.status == 200)
        #expect(status.json["running"] as? Bool == true)
        #expect(downloads.count == 4)
        for download in downloads {
            #expect(download.status == 403)
            #expect(download.json["error"] as? String == "not-a-regular-file", "\(download.text)")
        }
        let media = try await onThread { try request(port, "GET", "/api/media") }
        #expect(media.status == 200)
        #expect(media.text.contains("\"items\"") && !media.text.contains("f.mp4"))
    }

    /// A listing that blocks (a slow or hung disk) holds its connection's thread, not the Swift pool:
    /// with two listings stuck, the API still answers.
    @Test func aHandlerThatBlocksHoldsOnlyItsConnection() async throws {
        let served = try await ServedSession(catalog: { StuckCatalog(root: $0) })
        defer { Task { await served.stop() } }
        let stuck = try #require(served.server.catalog as? StuckCatalog)
        let port = served.port
        let (listings, status) = try await onThread { () -> ([Int], Int) in
            let listings = RequestsAtOnce(4, port: port, target: "/api/media")
            // Two listings (as many as the pool has threads here) wait inside the catalog.
            for _ in 0..<2 { _ = stuck.entered.wait(timeout: .now() + 10) }
            let status = try statusWithin5s(port).status
            for _ in 0..<4 { stuck.gate.signal() }
            _ = listings.finished.wait(timeout: .now() + 20)
            return (listings.responses.value.map(\.status), status)
        }
        #expect(status == 200)
        #expect(listings == [200, 200, 200, 200])
    }

    /// A request that stops half-way (in its head, or in its body) is answered 408 with
    /// `Connection: close` when the read limit passes, then closed.
    @Test func aPartialRequestIsAnswered408() async throws {
        var limits = HTTPLimits()
        limits.readTimeout = .milliseconds(300)
        let served = try await ServedSession(limits: limits)
        defer { Task { await served.stop() } }
        let port = served.port
        let partial = [
            "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n",
            "POST /api/mode HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"mode\"",
        ]
        for text in partial {
            let response = try await onThread { try rawRequest(port, Array(text.utf8)) }
            #expect(response.status == 408, "\(text)")
            #expect(response.headers["connection"] == "close")
            #expect(response.json["error"] as? String == "request-timeout")
        }
        // A whole request sent in time is answered as usual.
        #expect(try await onThread { try request(port, "GET", "/api/status") }.status == 200)
    }

    /// A request sent one byte per `send` is answered as a whole one is.
    @Test func aTrickledRequestIsAnswered() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        let port = served.port
        let response = try await onThread { () -> RawResponse in
            let connection = try TestConnection(port: port)
            var one: Int32 = 1
            setsockopt(connection.descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let text = "GET /api/mode HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n" + (0..<20).map { "X-Filler-\($0): \($0)\r\n" }.joined() + "\r\n"
            for byte in text.utf8 { connection.send([byte]) }
            return parseResponse(connection.receiveAll())
        }
        #expect(response.status == 200)
        #expect(response.json["mode"] as? String == "photo")
    }

    /// Event streams and MJPEG viewers opened and closed one after another, more of them than the
    /// streams allowed at once: each closed one gives its place back at once, and the next is admitted.
    @Test func aClosedStreamGivesItsPlaceBackAtOnce() async throws {
        var limits = HTTPLimits()
        limits.maxStreams = 2
        let served = try await ServedSession(limits: limits)
        defer { Task { await served.stop() } }
        let port = served.port
        for (index, target) in ["/api/events", "/api/events", "/stream.mjpeg", "/api/events", "/stream.mjpeg", "/api/events"].enumerated() {
            let head = try await onThread { () -> String in
                let connection = try TestConnection(port: port)
                connection.send(Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
                let bytes = connection.receive(until: {
                    let text = String(decoding: $0, as: UTF8.self)
                    return text.contains(": connected") || text.contains("--capture-frame") || text.hasPrefix("HTTP/1.1 503")
                })
                return String(decoding: bytes.prefix(400), as: UTF8.self)
            }  // the connection is closed here, by its client
            #expect(head.hasPrefix("HTTP/1.1 200 OK"), "stream \(index) (\(target)): \(head)")
            #expect(await served.server.http.waitForStreams(atMost: 0, timeout: .seconds(5)), "stream \(index) (\(target)) kept its place")
            #expect(served.server.events.count == 0 && served.server.jpeg.viewerCount == 0)
        }
    }
}

@Suite("Reading requests and waiting for clients")
struct IncrementalReadingTests {
    /// A FIFO or a folder with a movie's or a photo's name is neither listed nor opened (and asking for it
    /// does not wait for a writer).
    @Test func aFolderCatalogOpensOnlyRegularFiles() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("capture-media-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/folder.jpg", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(mkfifo(root + "/f.mp4", 0o600) == 0)
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/IMG_0001.jpg"))
        let catalog = FolderMediaCatalog(root: root)
        #expect(catalog.items(limit: 10).map(\.id) == ["IMG_0001.jpg"])
        #expect(throws: MediaAccessError.notRegularFile("f.mp4")) { try catalog.open("f.mp4") }
        #expect(throws: MediaAccessError.notRegularFile("folder.jpg")) { try catalog.open("folder.jpg") }
        let (item, descriptor) = try catalog.open("IMG_0001.jpg")
        close(descriptor)
        #expect(item.size == 1)
    }

    /// Fed one byte at a time, the reader looks at each byte of the head once and parses the head
    /// once; the body's bytes are only counted.
    @Test func aRequestFedByteByByteCostsWorkLinearInItsSize() throws {
        let headers = (0..<60).map { "X-Header-\($0): " + String(repeating: "v", count: 100) + "\r\n" }.joined()
        let body = String(repeating: "b", count: 4000)
        let head = "POST /api/mode?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n" + headers + "Content-Length: \(body.utf8.count)\r\n\r\n"
        let bytes = Array((head + body).utf8)
        var reader = RequestReader(limits: HTTPLimits())
        var outcome = RequestParser.Outcome.needMore
        var waited = 0
        for byte in bytes {
            outcome = reader.append([byte])
            if case .needMore = outcome { waited += 1 }
        }
        guard case .complete(let request, let consumed) = outcome else { Issue.record("not complete: \(outcome)"); return }
        #expect(waited == bytes.count - 1)
        #expect(consumed == bytes.count)
        #expect(request.headers.count == 62 && request.body.count == 4000 && request.query == ["x": "1"])
        #expect(reader.scannedByteCount <= head.utf8.count)
        #expect(reader.headParseCount == 1)
    }

    /// A request line that breaks a rule is refused as soon as it ends, before the headers come.
    @Test func aBadRequestLineIsRefusedBeforeTheHeaders() {
        var reader = RequestReader(limits: HTTPLimits())
        guard case .needMore = reader.append(Array("get / HTTP/1.1".utf8)) else { Issue.record("refused before the line ended"); return }
        guard case .refused(let status, _) = reader.append(Array("\r\nHost: x".utf8)) else { Issue.record("not refused"); return }
        #expect(status == .badRequest && reader.headParseCount == 0)
    }

    /// A client's queue, waiting, wakes for an item, and returns at once when the client's socket is
    /// closed by its peer.
    @Test func aWaitingQueueNoticesItsClientLeaving() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[0]) }
        let queue = ClientQueue<Int>(capacity: 4)
        let server = ends[0], client = ends[1]
        let (pushed, left) = try await onThread { () -> ([Int], Bool) in
            Thread { queue.push(7) }.start()
            let pushed = queue.take(waiting: .seconds(30), watching: server).items
            Thread { close(client) }.start()
            let left = queue.take(waiting: .seconds(30), watching: server).hungUp
            return (pushed, left)
        }
        #expect(pushed == [7])
        #expect(left)
    }
}

/// `GET /api/status`, bounded: a server whose Swift pool is held never answers, and this connection gives
/// up after 5 s (status 0).
func statusWithin5s(_ port: UInt16) throws -> RawResponse {
    let connection = try TestConnection(port: port, timeout: 5)
    connection.send(Array("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
    return parseResponse(connection.receiveAll())
}

/// The same GET sent several times at once, each from a thread of its own.
final class RequestsAtOnce: Sendable {
    /// Left as each is answered (or its connection gives up, after 10 s).
    let finished = DispatchGroup()
    /// The answers as they came (status 0: none).
    let responses = Locked<[RawResponse]>([])

    init(_ count: Int, port: UInt16, target: String) {
        for _ in 0..<count {
            finished.enter()
            Thread { [self] in
                let response = (try? request(port, "GET", target)) ?? RawResponse(status: 0, headers: [:], body: [])
                responses.withLock { $0.append(response) }
                finished.leave()
            }.start()
        }
    }
}

/// A catalog whose listing waits (bounded) for the test to let it go, like a listing on a hung disk.
final class StuckCatalog: MediaCatalog {
    let folder: FolderMediaCatalog
    /// Signalled as each listing starts waiting.
    let entered = DispatchSemaphore(value: 0)
    /// Each signal lets one listing go on.
    let gate = DispatchSemaphore(value: 0)

    init(root: String) { folder = FolderMediaCatalog(root: root) }

    func items(limit: Int) -> [MediaItem] {
        entered.signal()
        _ = gate.wait(timeout: .now() + 30)
        return folder.items(limit: limit)
    }

    func open(_ id: String) throws(MediaAccessError) -> (item: MediaItem, descriptor: Int32) { try folder.open(id) }
}
