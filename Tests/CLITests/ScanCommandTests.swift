import Foundation
import Testing

@Suite struct ScanCommandTests {
    static let video = packageRoot + "/Pipelines/media/codes.mp4"

    @Test func scansARecordedVideo() throws {
        // zbarimg (independent) agrees with what the video shows.
        let result = try capture(["scan", "-i", "file:" + Self.video, "--json"])
        #expect(result.status == 0, "\(result.error)")
        let codes = result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let values = Set(
            codes.compactMap { code -> String? in
                guard let type = code["type"] as? String, let value = code["value"] as? String else { return nil }
                return "\(type) \(value)"
            })
        #expect(values == ["qr https://example.org/capture", "upc-e 01234565"], "once per appearance: \(result.output)")
        // A recorded video is decoded whole, however busy the machine: its 45 frames (ffprobe
        // -count_frames), 15 a second, all under the decoder's limit of 15 a second.
        #expect(result.error.contains("scanned 45 of 45 frames, "), "\(result.error)")
        for code in codes {
            let corners = try #require(code["corners"] as? [[Double]])
            #expect(corners.count == 4 && corners.allSatisfy { $0.count == 2 && (0...1).contains($0[0]) && (0...1).contains($0[1]) })
            #expect(code["time"] is Double)
        }
    }

    @Test func typesCountAndRectOfInterest() throws {
        let upce = try capture(["scan", "-i", "file:" + Self.video, "--types", "upc-e", "--count", "1"])
        #expect(upce.status == 0 && upce.output.contains("upc-e  01234565") && !upce.output.contains("qr "))
        // The QR code sits in the left half: a rect of interest on the right half leaves only the UPC-E.
        let right = try capture(["scan", "-i", "file:" + Self.video, "--rect-of-interest", "0.5,0,0.5,1"])
        #expect(right.status == 0 && right.output.contains("upc-e") && !right.output.contains("qr "))
        let missing = try capture(["scan", "-i", "file:" + Self.video, "--types", "aztec", "--count", "1"])
        #expect(missing.status == 1 && missing.error.contains("read 0 of 1"))
        #expect(try capture(["scan", "--types", "nonsense"]).status == 64)
        #expect(try capture(["scan", "--rect-of-interest", "0.8,0,0.5,1"]).status == 64)
    }

    /// The video shows two codes; asking for three prints both and says so when the video ends (it
    /// once said "read 0 of 3").
    @Test func aCountNotReachedSaysHowManyWereRead() throws {
        let result = try capture(["scan", "-i", "file:" + Self.video, "--count", "3"])
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n").filter { !$0.isEmpty }
        #expect(lines.count == 2, "\(result.output)")
        #expect(result.error.contains("read 2 of 3 codes"), "\(result.error)")
        #expect(try capture(["scan", "-i", "file:" + Self.video, "--count", "2"]).status == 0)
    }

    /// --every-frame: a JSON object per decoded frame with codes, each with its corners, then `[]`
    /// codes once they are gone; AVFoundation's type names are taken.
    @Test func everyFrameReportsEachFrameWithItsCodes() throws {
        let result = try capture(["scan", "-i", "file:" + Self.video, "--every-frame", "--json", "--types", "qr,upce"])
        #expect(result.status == 0, "\(result.error)")
        let frames = result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let lists = frames.compactMap { $0["codes"] as? [[String: Any]] }
        #expect(lists.count == frames.count && frames.allSatisfy { $0["time"] is Double })
        // More frames than codes: the codes are reported in every frame they are read in.
        let filled = lists.filter { !$0.isEmpty }
        #expect(filled.count > 2, "\(result.output)")
        for list in filled {
            for code in list {
                #expect(["qr", "upc-e"].contains(code["type"] as? String ?? ""))
                #expect((code["corners"] as? [[Double]])?.count == 4)
            }
        }
        // A list is never empty twice in a row, and an empty list only follows one with codes.
        for (previous, next) in zip(lists, lists.dropFirst()) where next.isEmpty { #expect(!previous.isEmpty) }
        #expect(lists.first?.isEmpty == false)
    }

    @Test func timeoutEndsAScan() throws {
        let result = try capture(["scan", "-i", "test-pattern", "--timeout", "1"])
        #expect(result.status == 0)
        // The test pattern never ends: only the timeout can have ended the scan (no wall-clock bound,
        // which a busy machine broke: 33 s beside a full test run and two busy loops).
        #expect(result.error.contains("codes") && result.error.contains("scanned "), "\(result.error)")
    }
}
