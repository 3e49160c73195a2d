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
}

@Suite("Reading requests and waiting for clients")
struct IncrementalReadingTests {
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
}
