import Foundation
import GStreamer
import Testing

@testable import Capture

/// Issue 29: a connection's turn is stored as iOS stores it (a tag), the pixels turned only on request.
@Suite struct OrientationTests {
    static let turns = [false, true].flatMap { mirrored in [0, 90, 180, 270].map { PixelTurn(rotation: $0, mirrored: mirrored) } }

    /// GStreamer's tag names and EXIF's numbers, as GStreamer's EXIF writer maps them (exiftool read
    /// the files: 6 "Rotate 90 CW", 5 "Mirror horizontal and rotate 270 CW" for 90 then mirrored ...).
    @Test func eachTurnHasItsTagAndItsExifNumber() {
        #expect(
            Self.turns.map(\.imageOrientation) == [
                "rotate-0", "rotate-90", "rotate-180", "rotate-270", "flip-rotate-0", "flip-rotate-270", "flip-rotate-180", "flip-rotate-90",
            ])
        #expect(Self.turns.map(\.exifOrientation) == [1, 6, 3, 8, 2, 5, 4, 7])
        for turn in Self.turns { #expect(PixelTurn.imageOrientation(exif: turn.exifOrientation) == turn.imageOrientation) }
        #expect(PixelTurn.imageOrientation(exif: 9) == nil)
    }

    /// A picture drawn on the frame as shown lands on the stored frame where the turn brings it back:
    /// each of its pixels, read through `source`, is where the stored picture has it.
    @Test(arguments: turns) func overlaysAreStoredWhereTheTurnShowsThemUpright(turn: PixelTurn) {
        let (shownWidth, shownHeight) = turn.swapsSides ? (30, 40) : (40, 30)
        let picture = OverlayPicture(pixels: (0..<(5 * 3 * 4)).map { UInt8($0) }, width: 5, height: 3, stride: 20, x: 2, y: 7)
        let stored = turn.storing(picture, shownWidth: shownWidth, shownHeight: shownHeight)
        #expect(stored.width * stored.height == 15 && stored.width == (turn.swapsSides ? 3 : 5))
        for row in 0..<3 {
            for column in 0..<5 {
                let at = turn.source(x: 2 + column, y: 7 + row, width: shownWidth, height: shownHeight)
                #expect((0..<40).contains(at.x) && (0..<40).contains(at.y))
                let index = ((at.y - stored.y) * stored.width + at.x - stored.x) * 4
                #expect(Array(stored.pixels[index..<index + 4]) == Array(picture.pixels[(row * 20 + column * 4)..<(row * 20 + column * 4 + 4)]))
            }
        }
    }

    /// MP4 keeps the camera's pixels and turns them with the track matrix (ffprobe reads the display
    /// matrix: 270 clockwise is +90 counter-clockwise); `rotatesPixels` turns them; Matroska, which
    /// GStreamer writes no orientation into, turns them too.
    @Test func moviesTagTheirTurnWhereTheContainerCan() async throws {
        let directory = try TemporaryDirectory()
        let (session, _) = try makeSession(preset: .vga640x480)
        let tagged = CaptureMovieFileOutput(name: "tagged")
        tagged.connection = ConnectionSettings(rotation: 270)
        let turned = CaptureMovieFileOutput(name: "turned")
        turned.connection = ConnectionSettings(rotation: 270, rotatesPixels: true)
        let matroska = CaptureMovieFileOutput(name: "matroska")
        matroska.connection = ConnectionSettings(rotation: 90)
        for movie in [tagged, turned, matroska] { try session.addOutput(movie) }
        try await session.startRunning()
        for (movie, file) in [(tagged, "tagged.mp4"), (turned, "turned.mp4"), (matroska, "turned.mkv")] {
            try await movie.startRecording(to: directory.path(file))
        }
        for movie in [tagged, turned, matroska] { #expect(await movie.waitUntilRecorded(.seconds(1))) }
        for movie in [tagged, turned, matroska] { #expect(try await movie.stopRecording().success) }
        await session.stopRunning()
        func probe(_ file: String) throws -> String {
            try run([
                "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height:stream_side_data=rotation", "-of", "csv=p=0",
                directory.path(file),
            ]).output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        #expect(try probe("tagged.mp4") == "640,480,90")
        #expect(try probe("turned.mp4") == "480,640")
        #expect(try probe("turned.mkv") == "480,640")
        // The matrix's translation is the track's size turned (what exiftool shows of the header).
        #expect(MP4TrackMatrix.matrix(rotation: 270, width: 640, height: 480) == [0, -65536, 0, 65536, 0, 0, 0, 640 << 16, 1 << 30])
    }
}
