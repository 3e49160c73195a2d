import Testing

@testable import CaptureServer

@Suite("HTTP request parser")
struct RequestParserTests {
    let limits = HTTPLimits()

    func parse(_ text: String, limits: HTTPLimits = HTTPLimits()) -> RequestParser.Outcome {
        RequestParser.parse(Array(text.utf8), limits: limits)
    }

    func refusal(_ text: String, limits: HTTPLimits = HTTPLimits()) -> Int? {
        if case .refused(let status, _) = parse(text, limits: limits) { return status.code }
        return nil
    }

    @Test func readsARequestWithQueryAndBody() throws {
        let text = "POST /api/mode%20x?mode=video&a=b+c&token=t%2Fu HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 4\r\n\r\nabcdEXTRA"
        guard case .complete(let request, let consumed) = parse(text) else { Issue.record("not complete"); return }
        #expect(request.method == "POST")
        #expect(request.path == "/api/mode x")
        #expect(request.query == ["mode": "video", "a": "b c", "token": "t/u"])
        #expect(request.header("host") == "127.0.0.1:8080")
        #expect(request.body == Array("abcd".utf8))
        #expect(consumed == text.utf8.count - 5)
    }

    @Test func waitsForTheRestOfHeadersAndBody() {
        guard case .needMore = parse("GET / HTTP/1.1\r\nHost: x\r\n") else { Issue.record("headers incomplete"); return }
        guard case .needMore = parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc") else { Issue.record("body incomplete"); return }
    }

    @Test func refusesWhatIsNotStrictHTTP() {
        #expect(refusal("GET / HTTP/1.1\r\n\r\n") == 400)  // no Host
        #expect(refusal("GET  / HTTP/1.1\r\nHost: x\r\n\r\n") == 400)  // two spaces
        #expect(refusal("get / HTTP/1.1\r\nHost: x\r\n\r\n") == 400)  // lower-case method
        #expect(refusal("GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n") == 400)  // absolute form
        #expect(refusal("GET / HTTP/2.0\r\nHost: x\r\n\r\n") == 505)
        #expect(refusal("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n") == 400)
        #expect(refusal("GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n") == 400)
        #expect(refusal("GET / HTTP/1.1\r\nHost: x\r\nX: a\u{1}b\r\n\r\n") == 400)
        #expect(refusal("GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n") == 400)
        #expect(refusal("GET /a%00b HTTP/1.1\r\nHost: x\r\n\r\n") == 400)
        #expect(refusal("GET /%ff HTTP/1.1\r\nHost: x\r\n\r\n") == 400)  // not UTF-8
        #expect(refusal("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n") == 501)
        #expect(refusal("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n") == 400)
        #expect(refusal("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab") == 400)
    }

    @Test func refusesOversizedRequestsBeforeReadingThem() {
        var small = HTTPLimits()
        small.maxBodyBytes = 10
        small.maxHeaderBytes = 200
        small.maxHeaderCount = 3
        small.maxTargetBytes = 50
        #expect(refusal("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n", limits: small) == 413)
        #expect(refusal("GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 300), limits: small) == 431)
        #expect(refusal("GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: small) == 431)
        #expect(refusal("GET /" + String(repeating: "a", count: 60) + " HTTP/1.1\r\nHost: x\r\n\r\n", limits: small) == 414)
        // A target too long is refused before its line ends.
        #expect(refusal("GET /" + String(repeating: "a", count: 200), limits: small) == 414)
    }

    @Test func listenAddresses() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:8080") == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(try ListenAddress(parsing: "[::1]:0").host == "::1")
        #expect(try ListenAddress(parsing: "localhost:9").isLoopback)
        #expect(try ListenAddress(parsing: "8081") == ListenAddress(host: "127.0.0.1", port: 8081))
        #expect(try !ListenAddress(parsing: "0.0.0.0:80").isLoopback)
        #expect(try ListenAddress(parsing: "127.8.9.1:80").isLoopback)
        for bad in ["example.com:80", "1.2.3.4", "1.2.3.4:99999", ":80", "::1:80", "[::1]80", "1.2.3.4:8a"] {
            #expect(throws: ServerError.self) { try ListenAddress(parsing: bad) }
        }
    }

    @Test func constantTimeCompare() {
        #expect(CaptureWebServer.constantTimeEqual("abc", "abc"))
        #expect(!CaptureWebServer.constantTimeEqual("abc", "abd"))
        #expect(!CaptureWebServer.constantTimeEqual("abc", "abcd"))
        #expect(!CaptureWebServer.constantTimeEqual("", "a"))
    }
}

@Suite("Client queues")
struct ClientQueueTests {
    @Test func dropsTheOldestWhenFullAndCounts() {
        let queue = ClientQueue<Int>(capacity: 2)
        #expect(!queue.push(1))
        #expect(!queue.push(2))
        #expect(queue.push(3))
        #expect(queue.take(waiting: .zero) == [2, 3])
        #expect(queue.droppedCount == 1)
        #expect(queue.deliveredCount == 2)
        #expect(queue.take(waiting: .milliseconds(10)).isEmpty)
        queue.close()
        #expect(!queue.push(4))
        #expect(queue.take(waiting: .seconds(5)).isEmpty)
    }

    @Test func aRegistryNeverWaitsForASlowClient() {
        let registry = ClientRegistry<Int>()
        let (_, slow) = registry.add(capacity: 1)
        let (fastID, fast) = registry.add(capacity: 1)
        var behind = 0
        for value in 0..<100 {
            behind += registry.deliver(value)
            #expect(fast.take(waiting: .zero) == [value])
        }
        #expect(behind == 99)
        #expect(slow.take(waiting: .zero) == [99])
        #expect(slow.droppedCount == 99 && fast.droppedCount == 0)
        registry.remove(fastID)
        #expect(fast.isClosed && registry.count == 1)
    }
}
