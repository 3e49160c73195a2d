import Capture
import CaptureTestSupport
import Foundation
import Testing

@testable import CaptureMQTT
@testable import PipelineFile

/// Commands a hostile publisher would send, generated from a seed: every statement a command may be,
/// with paths that lead out (absolute, `..`, through a link, a FIFO, a trap folder beside the output
/// folder), printf directives, control characters, shell syntax, and text that is no statement.
struct HostileCommands {
    let trap: String
    var random: SplitMix64

    mutating func path() -> String {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return trap + "/x-\(random.next() % 1000).jpg"
        case 1: return "../trap/y.mp4"
        case 2: return "../../" + HostileText.path(&random)
        case 3: return "away/z.png"
        case 4: return "fifo.mp4"
        case 5: return "/tmp/../" + trap + "/w.png"
        case 6: return "sub/../../trap/v.mkv"
        default: return HostileText.path(&random)
        }
    }

    mutating func quoted() -> String {
        "\"" + path().replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: " ") + "\""
    }

    mutating func next() -> String {
        switch Int.random(in: 0..<12, using: &random) {
        case 0: return "capture-photo, output=photo, location=\(quoted())"
        case 1: return "start-recording, output=movie, location=\(quoted())"
        case 2: return "trim-video, input=\(quoted()), from=0, to=1, location=\(quoted())"
        case 3: return "generate-thumbnail, input=\(quoted()), at=1, location=\(quoted())"
        case 4: return "add-output, name=o\(random.next() % 100), kind=photo, location=\(quoted())"
        case 5: return "add-output, name=m\(random.next() % 100), kind=movie, location=\(quoted())"
        case 6: return "add-overlay, name=i\(random.next() % 100), output=photo, image=\(quoted())"
        case 7: return "add-input, name=f\(random.next() % 100), device=\"file:\(path())\""
        case 8: return "add-output, name=s\(random.next() % 100), kind=stream, publish=\"srt://127.0.0.1:9/\(random.next() % 100)\""
        case 9: return "add-output, name=q\(random.next() % 100), kind=frames, location=\(quoted())"
        case 10: return String(decoding: HostileText.path(&random).utf8.prefix(300), as: UTF8.self)
        default:
            let statements = ["stop-recording", "pause-recording", "toggle-flash", "remove-output", "set-preset", "configure-device", "wait"]
            return statements.randomElement(using: &random)! + ", " + ["output=", "name=", "preset=", "input="].randomElement(using: &random)! + quoted()
        }
    }
}

@Suite("Remote-command fuzz", .serialized)
struct RemoteFuzzTests {
    static let commands = 2000

    /// Thousands of hostile commands over a real broker; afterwards nothing exists outside the output
    /// folder, the trap folder beside it is empty, and the session still takes a photo.
    @Test func hostileCommandsOverMQTTLeaveNothingOutside() async throws {
        let rig = try await MQTTRemoteTests.Rig()
        let trap = rig.root.path("a/trap")
        try FileManager.default.createDirectory(atPath: trap, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: rig.folder + "/away", withDestinationPath: trap)
        #expect(mkfifo(rig.folder + "/fifo.mp4", 0o600) == 0)
        var generator = HostileCommands(trap: trap, random: SplitMix64(seed: 0x2025_1203))
        // In rounds below the backlog, so that every command is performed rather than refused busy.
        var sent = 0
        while sent < Self.commands {
            let round = min(24, Self.commands - sent)
            for _ in 0..<round { rig.sender.publish(name: "command", json: generator.next()) }
            sent += round
            let wanted = sent
            let answered = await rig.output.wait(timeout: .seconds(60)) { $0.filter { $0.hasPrefix("cam/reply ") }.count >= wanted }
            if !answered {
                // A gap in the sequence numbers is a reply lost; none, a command that never arrived.
                let seqs = Set(rig.replies.compactMap { MQTTRemoteTests.field("seq", of: $0) as? Int })
                let missing = (1...max(1, seqs.max() ?? 1)).filter { !seqs.contains($0) }
                // What else the subscriber read, by topic: a publisher that dropped messages says so on
                // `cam/events-dropped`.
                let topics = Dictionary(grouping: rig.output.lines, by: { $0.prefix { $0 != " " } }).mapValues(\.count)
                let read = topics.sorted { $0.key < $1.key }
                let highest = seqs.max() ?? 0
                Issue.record("round ending at \(sent): \(rig.replies.count) replies, highest seq \(highest), missing \(missing.prefix(10)); read: \(read)")
            }
            guard answered else { break }  // every later round would wait its minute for the same reply
        }
        let replies = rig.replies
        #expect(replies.count == Self.commands)
        #expect(replies.allSatisfy { (MQTTRemoteTests.field("seq", of: $0) as? Int) != nil })
        #expect(!replies.contains { MQTTRemoteTests.field("error", of: $0) as? String == "busy" })
        let photo = try await rig.send("capture-photo, output=photo")
        #expect(MQTTRemoteTests.field("ok", of: photo) as? Bool == true, "\(photo)")
        _ = await rig.stop()
        #expect(try FileManager.default.contentsOfDirectory(atPath: trap).isEmpty)
        // Beside the output folder: only what the test made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.root.path("a")).sorted() == ["b", "trap"])
        let top = try FileManager.default.contentsOfDirectory(atPath: rig.root.path).filter { !$0.hasPrefix("mosquitto") }
        #expect(top.sorted() == ["a", "private"], "\(top)")
    }
}
