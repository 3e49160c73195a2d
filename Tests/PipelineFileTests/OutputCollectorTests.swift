import CaptureTestSupport
import Testing

/// The tests' reader of a child's output splits lines as the child wrote them.
struct OutputCollectorTests {
    /// mosquitto_sub prints a payload as it came, so a hostile command ending in a carriage return is
    /// followed by "\n": the next message (a reply a test waits for) stays a line of its own.
    @Test func aCarriageReturnBeforeTheNewlineJoinsNoLines() async throws {
        let child = try ChildProcess(["/usr/bin/printf", #"cam/command x\r\ncam/reply {"seq": 1}\n\r\n\nlast"#])
        let output = child.collectOutput()
        #expect(await child.ended().status == 0)
        #expect(await output.wait(timeout: .seconds(30)) { $0.count == 4 })
        #expect(output.lines == ["cam/command x\r", #"cam/reply {"seq": 1}"#, "\r", ""])
    }
}
