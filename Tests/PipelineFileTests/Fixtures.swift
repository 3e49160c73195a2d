import Capture
import Foundation
import Testing

@testable import PipelineFile

/// The example of the `.pipeline` contract, verbatim.
let contractExample = #"""
    # Recipe: take a photo, then switch to video and record three seconds.
    session, preset=hd1280x720
    input, name=camera, device=default
    output, name=photo, kind=photo, codec=jpeg, quality=90, location="IMG_%04d.jpg"
    output, name=preview, kind=preview

    start
    capture-photo, output=photo
    wait, event=photo-saved
    begin-configuration
    remove-output, name=photo
    add-input, name=mic, device=default-audio
    add-output, name=movie, kind=movie, location="clip.mp4"
    commit-configuration
    start-recording, output=movie
    wait, duration=3
    stop-recording, output=movie
    wait, event=recording-finished
    stop
    expect, event=photo-saved, count=1
    expect, event=recording-finished, count=1
    """#

/// A file that uses every statement and every key of the format (the fuzz test's richest seed).
let everyFeature = #"""
    session, preset=input-priority
    input, name=camera, device=test-pattern, media=video, pattern=ball, size=1280x720, framerate=30, fail-after=500
    input, name=mic, device=test-tone
    input, name=replay, device="file:/tmp/clip.mp4", media=video, framerate=30000/1001
    output, name=photo, kind=photo, input=camera, rotation=90, mirrored=true, codec=jpeg, quality=85, location="IMG_%04d.jpg", size=640x480, zero-shutter-lag=true
    output, name=movie, kind=movie, location="clips/take %02d.mkv", container=mkv, video-codec=vp9, audio-codec=opus, bitrate="4Mbps", max-duration="1.5m", max-file-size="50MB", min-free-disk-space="1GiB", fragment-interval="500ms"
    output, name=codes, kind=metadata, types={ qr, ean-13, code-128 }, rect-of-interest=< 0.0, 0.25, 1.0, 0.5 >, backend=zbar, delivery=every-frame, discard-late-frames=false
    output, name=frames, kind=frames, location="frames/%05d.png", max-rate=2.5, size=320x240
    output, name=preview, kind=preview, sink=none, gravity=resize-aspect-fill, size=640x480
    overlay, output=preview, text="Hello, \"world\" # not a comment", font="DejaVu Sans Bold", size=0.08, color="#ffcc00", background=none, position=bottom-right, alpha=0.75
    overlay, name=logo, output={ photo, frames }, image="logo.png", width=0.2, position=< 0.7, 0.05 >

    start  # the scenario
    wait, event=session-started, timeout=5
    capture-photo, output=photo, location="burst_%02d.jpg", count=3, interval=0.25, flash-mode=auto
    wait, event=photo-saved, output=photo, count=3, timeout="30s"
    start-recording, output=movie, location="take.mkv"
    pause-recording, output=movie
    resume-recording, output=movie
    stop-recording, output=movie, expect-error=not-available-yet
    configure-device, input=camera, focus-mode=continuous, focus-point=< 0.5, 0.5 >, exposure-mode=custom, exposure-point=< 0.25, 0.75 >, exposure-bias=-1.5, white-balance-mode=locked, torch-mode=on, torch-level=0.5, flash-mode=off, zoom=2, low-light-boost=true, exposure-duration="10ms", gain=4, white-balance-temperature=3200, controls={ "brightness=200", "power_line_frequency=50 Hz" }
    begin-configuration
        set-preset, preset=hd1280x720
        remove-output, name=codes
        add-output, name=codes2, kind=metadata, types=qr
        begin-configuration
            remove-input, name=mic
        commit-configuration
    commit-configuration, expect-error=true
    repeat, count=2, actions={ "begin-configuration", "add-output, name=extra, kind=frames, max-rate=1", "commit-configuration", "wait, duration=0.1", "remove-output, name=extra" }
    wait, event=code-detected, type=qr, value="0123", output=codes2, count=1, timeout=2, expect-error=wait-timed-out
    add-overlay, name=time, output=movie, clock=running, font=Monospace, color=white, background="#00000080", position=top-right
    add-overlay, name=frame, output={ preview, movie }, rectangle=< 0.1, 0.1, 0.8, 0.8 >, color=red, line-width=0.01, fill="#ff000040"
    add-overlay, name=mark, output=preview, line=< 0, 0, 1, 1 >, color=green
    add-overlay, name=label, output=preview, text="x", font="No Such Font", expect-error=unknown-font
    add-overlay, name=zone, output=preview, polygon=< 0.2, 0.2, 0.8, 0.2, 0.5, 0.9 >, fill=yellow, color=none, alpha=0.5
    set-overlay, name=overlay1, text="Flash: {flash-mode} - {camera} {recording}", position=top
    set-overlay, name=frame, output=movie, color=blue
    remove-overlay, name=zone, output=preview
    remove-overlay, name=frame
    toggle-flash, output=photo
    toggle-flash
    switch-camera, position=front, expect-error=no-device-available
    switch-camera, expect-error=true
    trim-video, recording=movie, from=1.5, to=3, location="cut.mp4", exact=true, save-to-library=true, expect-error=no-recording-yet
    trim-video, input="cut.mp4", from=0.5, to=1, location="cut again.mkv", expect-error=true
    generate-thumbnail, recording=movie, at="50%", location="thumb.jpg", size="320x180", expect-error=true
    generate-thumbnail, input="cut.mp4", at=0.25, location="thumb.png", expect-error=true
    stop
    expect, event=video-trimmed, count=0
    expect, event=thumbnail-generated, count=0
    expect, event=photo-saved, output=photo, at-least=3
    expect, event=code-detected, type=qr, value="https://example.com/?a=1&b=2", count=0
    expect, event=configuration-committed, swapped="camera -> front", count=0
    expect, event=action-failed, count=2
    """#

/// A temporary directory removed when the value goes away.
final class TemporaryDirectory: @unchecked Sendable {
    // @unchecked: the URL is immutable after init.
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Parses, failing the test with the rendered diagnostics when the text is invalid.
func parsed(_ text: String, file: String = "test.pipeline", options: ParseOptions = ParseOptions()) throws -> PipelineDocument {
    do {
        return try PipelineDocument.parse(text, file: file, options: options)
    } catch {
        Issue.record("unexpected diagnostics:\n\(error.rendered)")
        throw error
    }
}

/// The rendered diagnostics of an invalid text ("" when it parses).
func diagnostics(_ text: String, file: String = "test.pipeline", options: ParseOptions = ParseOptions()) -> String {
    do {
        _ = try PipelineDocument.parse(text, file: file, options: options)
        return ""
    } catch {
        return error.rendered
    }
}
