import Capture
import CaptureTestSupport
import Foundation
import Testing

/// `capture serve` end to end: the release CLI on 127.0.0.1 (a free port), stopped by SIGTERM.
@Suite("capture serve")
struct ServeCommandTests {
    /// A port nobody listens on now.
    func freePort() -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// curl's status code and body (curl is independent of the server).
    func curl(_ arguments: [String]) throws -> (code: Int, body: String) {
        let result = try tool(["curl", "-s", "-m", "10", "-w", "\n%{http_code}"] + arguments)
        let lines = result.output.components(separatedBy: "\n")
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    func waitListening(_ port: UInt16, token: String? = nil) async throws -> Bool {
        try await waitUntil(every: .milliseconds(100)) {
            try curl(["http://127.0.0.1:\(port)/api/status" + (token.map { "?token=\($0)" } ?? "")]).code != 0
        }
    }

    @Test func refusesBadOptionsAndScenarios() throws {
        let scratch = try Scratch()
        #expect(try capture(["serve", "--listen", "example.com:80"]).status == 64)
        #expect(try capture(["serve", "--listen", "127.0.0.1:99999"]).status == 64)
        #expect(try capture(["serve", "--token", "has space"]).status == 64)
        #expect(try capture(["serve", "a.pipeline", "b.pipeline"]).status == 64)
        #expect(try capture(["serve", "--preview-size", "5x5"]).status == 64)
        try scratch.write("scenario.pipeline", "input, name=camera, device=test-pattern\noutput, name=photo, kind=photo\nstart\nstop\n")
        let scenario = try capture(["serve", scratch.file("scenario.pipeline"), "--listen", "127.0.0.1:0"])
        #expect(scenario.status == 65)
        #expect(scenario.error.contains("without a scenario"))
        let help = try capture(["serve", "--help"])
        #expect(help.status == 0 && help.output.contains("--listen"))
    }

    @Test func servesTheSessionUntilSignalled() async throws {
        let scratch = try Scratch()
        let port = freePort()
        let child = try ChildProcess([
            captureBinary, "serve", "--listen", "127.0.0.1:\(port)", "--output-dir", scratch.file("media"),
            "--set", "camera.device=test-pattern", "--set", "session.preset=cif352x288",
        ])
        #expect(try await waitListening(port))
        let page = try curl(["http://127.0.0.1:\(port)/"])
        #expect(page.code == 200 && page.body.contains("<title>Capture</title>"))
        #expect(try await waitUntil(every: .milliseconds(100)) { try curl(["http://127.0.0.1:\(port)/api/status"]).body.contains("\"running\":true") })
        #expect(try curl(["-X", "POST", "http://127.0.0.1:\(port)/api/photo"]).code == 200)
        let listed = try curl(["http://127.0.0.1:\(port)/api/media"]).body
        #expect(listed.contains("IMG_0001.jpg"))
        #expect(try tool(["identify", scratch.file("media/IMG_0001.jpg")]).status == 0)
        child.signal(SIGTERM)
        let result = child.finish()
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("serving http://127.0.0.1:\(port)/"))
    }

    /// A FIFO in the media folder once hung every request and SIGTERM with them: two downloads of it
    /// blocked in open() on the cooperative pool's two threads. Each download is refused at once, the
    /// status and the shutter still answer, and SIGTERM ends the process.
    @Test func aFIFOInTheMediaFolderHoldsUpNeitherTheServerNorItsEnd() async throws {
        let scratch = try Scratch()
        let port = freePort()
        try FileManager.default.createDirectory(atPath: scratch.file("media"), withIntermediateDirectories: true)
        #expect(mkfifo(scratch.file("media/f.mp4"), 0o600) == 0)
        let child = try ChildProcess([
            captureBinary, "serve", "--listen", "127.0.0.1:\(port)", "--output-dir", scratch.file("media"),
            "--set", "camera.device=test-pattern", "--set", "session.preset=cif352x288",
        ])
        #expect(try await waitListening(port))
        // Three at once (more than the pool's threads), each bounded by curl's own 10 s.
        let downloads = try (0..<3).map { _ in
            try ChildProcess(["curl", "-s", "-m", "10", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/media/f.mp4"])
        }
        for download in downloads {
            let result = await onOwnThread { download.finish() }
            #expect(result.status == 0 && result.output != "200" && result.output != "000", "a FIFO download answered \(result.output)")
        }
        #expect(try await waitUntil(every: .milliseconds(100)) { try curl(["http://127.0.0.1:\(port)/api/status"]).body.contains("\"running\":true") })
        #expect(try curl(["-X", "POST", "http://127.0.0.1:\(port)/api/photo"]).code == 200)
        child.signal(SIGTERM)
        let result = await onOwnThread { child.finish() }
        #expect(result.status == 0, "\(result.error)")
    }

    @Test func beyondLoopbackATokenIsGeneratedAndRequired() async throws {
        let scratch = try Scratch()
        let port = freePort()
        // Listens on every address; the test talks to it through 127.0.0.1 only.
        let child = try ChildProcess([
            captureBinary, "serve", "--listen", "0.0.0.0:\(port)", "--output-dir", scratch.file("media"),
            "--set", "camera.device=test-pattern", "--set", "session.preset=cif352x288", "--token", "s3cret-token",
        ])
        #expect(try await waitListening(port))
        #expect(try curl(["http://127.0.0.1:\(port)/api/status"]).code == 401)
        #expect(try curl(["http://127.0.0.1:\(port)/"]).code == 401)
        #expect(try curl(["-H", "Authorization: Bearer s3cret-token", "http://127.0.0.1:\(port)/api/status"]).code == 200)
        #expect(try curl(["http://127.0.0.1:\(port)/api/status?token=s3cret-token"]).code == 200)
        child.signal(SIGTERM)
        #expect(child.finish().status == 0)

        let generated = try ChildProcess([
            captureBinary, "serve", "--listen", "0.0.0.0:\(freePort())", "--output-dir", scratch.file("media"),
            "--set", "camera.device=test-pattern", "--duration", "2",
        ])
        let result = generated.finish()
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.range(of: "token: [0-9a-f]{32}", options: .regularExpression) != nil)
        #expect(result.error.range(of: "serving http://127\\.0\\.0\\.1:[0-9]+/\\?token=[0-9a-f]{32}", options: .regularExpression) != nil)
    }

    /// The token from a file (its first line) or the environment, never in argv: `ps` (the process's
    /// command line in /proc) does not show it, and requests need it.
    @Test func theTokenComesFromAFileOrTheEnvironment() async throws {
        let scratch = try Scratch()
        let tokenFile = scratch.file("token")
        try "file-token-123\nsecond line\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        // Written with CRLF endings: the line ends before the "\r".
        try "crlf-token-789\r\nsecond line\r\n".write(toFile: scratch.file("crlf"), atomically: true, encoding: .utf8)
        for (arguments, environment, token) in [
            (["--token-file", tokenFile], [String: String](), "file-token-123"),
            (["--token-file", scratch.file("crlf")], [String: String](), "crlf-token-789"),
            ([], ["CAPTURE_TOKEN": "env-token-456"], "env-token-456"),
        ] {
            let port = freePort()
            var variables = ProcessInfo.processInfo.environment
            for (key, value) in environment { variables[key] = value }
            let child = try ChildProcess(
                [
                    captureBinary, "serve", "--listen", "0.0.0.0:\(port)", "--output-dir", scratch.file("media"),
                    "--set", "camera.device=test-pattern", "--set", "session.preset=cif352x288",
                ] + arguments, environment: variables)
            #expect(try await waitListening(port, token: token))
            #expect(try curl(["http://127.0.0.1:\(port)/api/status"]).code == 401)
            #expect(try curl(["-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/api/status"]).code == 200)
            let commandLine = (try? String(contentsOfFile: "/proc/\(child.pid)/cmdline", encoding: .utf8)) ?? ""
            #expect(!commandLine.isEmpty)
            #expect(!commandLine.contains(token))
            child.signal(SIGTERM)
            #expect(child.finish().status == 0)
        }
        // Both ways at once, or an empty file, are usage errors.
        #expect(try capture(["serve", "--token", "a", "--token-file", tokenFile]).status == 64)
        try "\n".write(toFile: scratch.file("empty"), atomically: true, encoding: .utf8)
        #expect(try capture(["serve", "--token-file", scratch.file("empty")]).status == 64)
        #expect(try capture(["serve", "--token-file", scratch.file("missing")]).status == 64)
    }
}
