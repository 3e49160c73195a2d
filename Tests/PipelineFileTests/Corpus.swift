// The corpus of invalid .pipeline files and the exact diagnostics each must produce.
// Each case is a whole file (written as it would be on disk) and the text `capture validate` prints.
// `{ERROR_NAMES}` stands for the list of error names (it grows with CaptureError).

import Foundation

@testable import PipelineFile

struct CorpusCase: Sendable, CustomStringConvertible {
    let name: String
    let overrides: [String]
    let source: String
    private let template: String
    var description: String { name }

    init(name: String, overrides: [String], source: String, expected: String) {
        self.name = name
        self.overrides = overrides
        self.source = source
        self.template = expected
    }

    /// The expected diagnostics, with the error-name list filled in.
    var expected: String {
        template.replacingOccurrences(of: "{ERROR_NAMES}", with: Vocabulary.errorNames.joined(separator: ", "))
    }
}

let corpus: [CorpusCase] = [
    CorpusCase(
        name: "unknown-statement",
        overrides: [],
        source: #"""
            session, preset=vga640x480
            input, name=camera, device=test-pattern
            ouptut, name=preview, kind=preview
            frobnicate, level=3
            """#,
        expected: #"""
            unknown-statement.pipeline:3:1: error: unknown statement 'ouptut' (did you mean 'output'?); known statements: declarations session, input, output, overlay; actions start, stop, wait, capture-photo, start-recording, stop-recording, pause-recording, resume-recording, begin-configuration, commit-configuration, add-input, add-output, remove-input, remove-output, set-preset, configure-device, add-overlay, set-overlay, remove-overlay, toggle-flash, switch-camera, trim-video, generate-thumbnail, pick-from-library, expect, repeat
            ouptut, name=preview, kind=preview
            ^
            unknown-statement.pipeline:4:1: error: unknown statement 'frobnicate'; known statements: declarations session, input, output, overlay; actions start, stop, wait, capture-photo, start-recording, stop-recording, pause-recording, resume-recording, begin-configuration, commit-configuration, add-input, add-output, remove-input, remove-output, set-preset, configure-device, add-overlay, set-overlay, remove-overlay, toggle-flash, switch-camera, trim-video, generate-thumbnail, pick-from-library, expect, repeat
            frobnicate, level=3
            ^
            """#
    ),
    CorpusCase(
        name: "unknown-keys",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern, sise=1280x720
            output, name=photo, kind=photo, qualty=90
            output, name=frames, kind=frames, quality=80, location="f/%03d.png"
            session, preset=hd1280x720, fps=30
            start, now=true
            """#,
        expected: #"""
            unknown-keys.pipeline:1:42: error: unknown key 'sise' for 'input' (did you mean 'size'?); allowed keys: name, device, media, pattern, size, framerate, fail-after, reconnect, fallback
            input, name=camera, device=test-pattern, sise=1280x720
                                                     ^
            unknown-keys.pipeline:2:33: error: unknown key 'qualty' for photo output 'photo' (did you mean 'quality'?); allowed keys: name, kind, input, rotation, mirrored, codec, quality, location, size, zero-shutter-lag, crop, save-to-library, rotate-pixels, overwrite
            output, name=photo, kind=photo, qualty=90
                                            ^
            unknown-keys.pipeline:3:35: error: unknown key 'quality' for frames output 'frames' (it is a key of photo outputs); allowed keys: name, kind, input, rotation, mirrored, location, max-rate, size
            output, name=frames, kind=frames, quality=80, location="f/%03d.png"
                                              ^
            unknown-keys.pipeline:4:29: error: unknown key 'fps' for 'session'; allowed keys: preset, fallback-preset
            session, preset=hd1280x720, fps=30
                                        ^
            unknown-keys.pipeline:5:8: error: unknown key 'now' for 'start'; allowed keys: expect-error
            start, now=true
                   ^
            """#
    ),
    CorpusCase(
        name: "value-types",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            output, name=photo, kind=photo, quality=0, rotation=45, mirrored=maybe
            output, name=photo2, kind=photo, quality="90", codec=png, location=shot.png
            output, name=frames, kind=frames, location="frames/%05d.png", max-rate=-1
            output, name=still, kind=photo, size=1280, location="a.jpg", codec=png
            """#,
        expected: #"""
            value-types.pipeline:2:33: error: quality must be an integer from 1 to 100, got 0
            output, name=photo, kind=photo, quality=0, rotation=45, mirrored=maybe
                                            ^
            value-types.pipeline:2:44: error: rotation must be 0, 90, 180 or 270 (degrees clockwise), got 45
            output, name=photo, kind=photo, quality=0, rotation=45, mirrored=maybe
                                                       ^
            value-types.pipeline:2:57: error: mirrored must be true or false, got maybe
            output, name=photo, kind=photo, quality=0, rotation=45, mirrored=maybe
                                                                    ^
            value-types.pipeline:3:34: error: quality must be an integer from 1 to 100, got "90" (a string: write quality=90 without quotes)
            output, name=photo2, kind=photo, quality="90", codec=png, location=shot.png
                                             ^
            value-types.pipeline:4:63: error: max-rate must be a number above 0 and up to 1000 (frames per second), got -1
            output, name=frames, kind=frames, location="frames/%05d.png", max-rate=-1
                                                                          ^
            value-types.pipeline:5:33: error: size must be WIDTHxHEIGHT like "1280x720" (each from 1 to 16384), got 1280
            output, name=still, kind=photo, size=1280, location="a.jpg", codec=png
                                            ^
            value-types.pipeline:5:44: error: location 'a.jpg' ends in .jpg but codec is png; make them agree
            output, name=still, kind=photo, size=1280, location="a.jpg", codec=png
                                                       ^
            """#
    ),
    CorpusCase(
        name: "durations-and-sizes",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            output, name=movie, kind=movie, location=clip.mp4, max-duration="2 hours", max-file-size="50 parsecs", bitrate=-5, fragment-interval=-1
            output, name=photo, kind=photo, size="1280x"
            start
            wait, duration=-1
            wait, event=session-started, timeout=0
            """#,
        expected: #"""
            durations-and-sizes.pipeline:2:52: error: max-duration must be a positive number of seconds up to 1000000000 (2.5) or a string with a unit ("500ms", "2s", "1.5m"), got "2 hours"
            output, name=movie, kind=movie, location=clip.mp4, max-duration="2 hours", max-file-size="50 parsecs", bitrate=-5, fragment-interval=-1
                                                               ^
            durations-and-sizes.pipeline:2:76: error: max-file-size must be a byte size: an integer number of bytes or a string with a unit ("50MB", "1.5GB", "512KiB"), got "50 parsecs"
            output, name=movie, kind=movie, location=clip.mp4, max-duration="2 hours", max-file-size="50 parsecs", bitrate=-5, fragment-interval=-1
                                                                                       ^
            durations-and-sizes.pipeline:2:104: error: bitrate must be bits per second: an integer or a string with a unit ("4Mbps", "800kbps"), got -5
            output, name=movie, kind=movie, location=clip.mp4, max-duration="2 hours", max-file-size="50 parsecs", bitrate=-5, fragment-interval=-1
                                                                                                                   ^
            durations-and-sizes.pipeline:2:116: error: fragment-interval must be a number of seconds up to 1000000000 (2.5) or a string with a unit ("500ms", "2s", "1.5m"), got -1
            output, name=movie, kind=movie, location=clip.mp4, max-duration="2 hours", max-file-size="50 parsecs", bitrate=-5, fragment-interval=-1
                                                                                                                               ^
            durations-and-sizes.pipeline:3:33: error: size must be WIDTHxHEIGHT like "1280x720" (each from 1 to 16384), got "1280x"
            output, name=photo, kind=photo, size="1280x"
                                            ^
            durations-and-sizes.pipeline:5:7: error: duration must be a number of seconds up to 1000000000 (2.5) or a string with a unit ("500ms", "2s", "1.5m"), got -1
            wait, duration=-1
                  ^
            durations-and-sizes.pipeline:6:30: error: timeout must be a positive number of seconds up to 1000000000 (2.5) or a string with a unit ("500ms", "2s", "1.5m"), got 0
            wait, event=session-started, timeout=0
                                         ^
            """#
    ),
    CorpusCase(
        name: "enums",
        overrides: [],
        source: #"""
            session, preset=hd
            input, name=camera, device=test-pattern, media=both, pattern=balls
            output, name=movie, kind=movie, container=avi, video-codec=h265
            output, name=codes, kind=metadata, backend=zbarr, types={ qr, ean13, qr }, rect-of-interest=< 0.5, 0.5, 0.75, 0.25 >
            output, name=preview, kind=preview, sink=windw
            overlay, output=preview, text="hello", position=middle, alpha=1.5
            """#,
        expected: #"""
            enums.pipeline:1:10: error: preset must be photo, high, medium, low, cif352x288, vga640x480, hd1280x720, hd1920x1080, hd4K3840x2160 or input-priority, got hd
            session, preset=hd
                     ^
            enums.pipeline:2:42: error: media must be video or audio, got both
            input, name=camera, device=test-pattern, media=both, pattern=balls
                                                     ^
            enums.pipeline:2:54: error: pattern must be smpte, snow, black, white, red, green, blue, checkers-1, checkers-2, checkers-4, checkers-8, circular, blink, smpte75, zone-plate, gamut, chroma-zone-plate, solid-color, ball, smpte100, bar, pinwheel, spokes, gradient, colors or smpte-rp-219, got balls (did you mean 'ball'?)
            input, name=camera, device=test-pattern, media=both, pattern=balls
                                                                 ^
            enums.pipeline:3:33: error: container must be mp4, mkv, webm or mov, got avi
            output, name=movie, kind=movie, container=avi, video-codec=h265
                                            ^
            enums.pipeline:3:48: error: video-codec must be h264, vp8, vp9 or mjpeg, got h265 (did you mean 'h264'?)
            output, name=movie, kind=movie, container=avi, video-codec=h265
                                                           ^
            enums.pipeline:4:36: error: backend must be auto, zbar or zxing, got zbarr (did you mean 'zbar'?)
            output, name=codes, kind=metadata, backend=zbarr, types={ qr, ean13, qr }, rect-of-interest=< 0.5, 0.5, 0.75, 0.25 >
                                               ^
            enums.pipeline:4:63: error: types holds ean13, which is not one of qr, micro-qr, aztec, pdf417, micro-pdf417, data-matrix, ean-8, ean-13, upc-a, upc-e, code-39, code-39-mod-43, code-93, code-128, itf, itf-14, codabar, databar, databar-expanded or databar-limited (did you mean 'ean-13'?)
            output, name=codes, kind=metadata, backend=zbarr, types={ qr, ean13, qr }, rect-of-interest=< 0.5, 0.5, 0.75, 0.25 >
                                                                          ^
            enums.pipeline:4:70: error: types lists qr twice
            output, name=codes, kind=metadata, backend=zbarr, types={ qr, ean13, qr }, rect-of-interest=< 0.5, 0.5, 0.75, 0.25 >
                                                                                 ^
            enums.pipeline:4:76: error: rect-of-interest must be < x, y, width, height > in normalized coordinates (each 0-1, width and height above 0, inside the frame), got < 0.5, 0.5, 0.75, 0.25 >
            output, name=codes, kind=metadata, backend=zbarr, types={ qr, ean13, qr }, rect-of-interest=< 0.5, 0.5, 0.75, 0.25 >
                                                                                       ^
            enums.pipeline:5:37: error: sink must be auto, window or none, got windw (did you mean 'window'?)
            output, name=preview, kind=preview, sink=windw
                                                ^
            enums.pipeline:6:40: error: position must be one of top-left, top, top-right, left, center, right, bottom-left, bottom or bottom-right or a point < x, y > (each 0-1), got middle
            overlay, output=preview, text="hello", position=middle, alpha=1.5
                                                   ^
            enums.pipeline:6:57: error: alpha must be a number from 0 to 1 (0 transparent, 1 opaque), got 1.5
            overlay, output=preview, text="hello", position=middle, alpha=1.5
                                                                    ^
            """#
    ),
    CorpusCase(
        name: "missing-required",
        overrides: [],
        source: #"""
            input, device=test-pattern
            output, kind=preview
            output, name=photo
            overlay, text="hi"
            start
            capture-photo
            remove-output
            expect, count=1
            repeat, count=2
            set-preset
            configure-device, zoom=2
            wait
            """#,
        expected: #"""
            missing-required.pipeline:1:1: error: missing required key 'name' for 'input' (a unique name, like name=camera)
            input, device=test-pattern
            ^
            missing-required.pipeline:2:1: error: missing required key 'name' for preview output (a unique name, like name=preview)
            output, kind=preview
            ^
            missing-required.pipeline:3:1: error: missing required key 'kind' for output 'photo' (photo, movie, metadata, frames, preview or stream)
            output, name=photo
            ^
            missing-required.pipeline:4:1: error: missing required key 'output' for 'overlay' (the output it draws on, like output=preview)
            overlay, text="hi"
            ^
            missing-required.pipeline:6:1: error: missing required key 'output' for 'capture-photo' (the photo output to use, like output=photo)
            capture-photo
            ^
            missing-required.pipeline:7:1: error: missing required key 'name' for 'remove-output' (the output to remove)
            remove-output
            ^
            missing-required.pipeline:8:1: error: missing required key 'event' for 'expect' (the event to count, like event=session-started)
            expect, count=1
            ^
            missing-required.pipeline:9:1: error: missing required key 'actions' for 'repeat' (the statements to repeat, like actions={ "capture-photo, output=photo", "wait, duration=1" })
            repeat, count=2
            ^
            missing-required.pipeline:10:1: error: missing required key 'preset' for 'set-preset' (photo, high, medium, low, cif352x288, vga640x480, hd1280x720, hd1920x1080, hd4K3840x2160, input-priority)
            set-preset
            ^
            missing-required.pipeline:11:1: error: missing required key 'input' for 'configure-device' (the camera input, like input=camera)
            configure-device, zoom=2
            ^
            missing-required.pipeline:12:1: error: wait needs duration= (like duration=2 or duration="500ms") or event= (like event=session-started)
            wait
            ^
            """#
    ),
    CorpusCase(
        name: "duplicate-names",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            input, name=camera, device=test-tone
            output, name=camera, kind=preview
            session, preset=vga640x480
            session, preset=hd1280x720
            start
            begin-configuration
            add-output, name=preview, kind=preview
            add-output, name=preview, kind=frames
            commit-configuration
            """#,
        expected: #"""
            duplicate-names.pipeline:2:8: error: duplicate name 'camera': first declared at 1:1; inputs and outputs need unique names
            input, name=camera, device=test-tone
                   ^
            duplicate-names.pipeline:3:9: error: duplicate name 'camera': first declared at 1:1; inputs and outputs need unique names
            output, name=camera, kind=preview
                    ^
            duplicate-names.pipeline:5:1: error: duplicate 'session' statement: first declared at 4:1
            session, preset=hd1280x720
            ^
            duplicate-names.pipeline:9:13: error: duplicate name 'preview': first declared at 8:1; inputs and outputs need unique names
            add-output, name=preview, kind=frames
                        ^
            """#
    ),
    CorpusCase(
        name: "undeclared-references",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            output, name=photo, kind=photo, input=cam
            output, name=preview, kind=preview
            overlay, output=nothing, text="x"
            start
            capture-photo, output=phto
            configure-device, input=nope, zoom=2
            wait, event=frame-saved, output=ghost
            remove-output, name=preview
            remove-output, name=preview
            start-recording, output=preview
            expect, event=photo-saved, output=photo, count=0
            """#,
        expected: #"""
            undeclared-references.pipeline:2:33: error: no input named 'cam'; inputs: camera
            output, name=photo, kind=photo, input=cam
                                            ^
            undeclared-references.pipeline:4:17: error: no output named 'nothing'; outputs: photo, preview
            overlay, output=nothing, text="x"
                            ^
            undeclared-references.pipeline:6:16: error: no output named 'phto' (did you mean 'photo'?); outputs: photo, preview
            capture-photo, output=phto
                           ^
            undeclared-references.pipeline:7:19: error: no input named 'nope'; inputs: camera
            configure-device, input=nope, zoom=2
                              ^
            undeclared-references.pipeline:8:26: error: wait names output 'ghost', which the file never declares or adds; names in this file: camera, photo, preview
            wait, event=frame-saved, output=ghost
                                     ^
            undeclared-references.pipeline:10:16: error: output 'preview' was already removed at 9:1
            remove-output, name=preview
                           ^
            undeclared-references.pipeline:11:18: error: output 'preview' was removed at 9:1; add it again before start-recording
            start-recording, output=preview
                             ^
            """#
    ),
    CorpusCase(
        name: "declaration-after-action",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview
            start
            output, name=photo, kind=photo
            overlay, output=preview, clock=true
            session, preset=low
            """#,
        expected: #"""
            declaration-after-action.pipeline:4:1: error: 'output' declaration after the first action (at 3:1): declarations come first; to add one while the session runs, use add-output inside begin-configuration/commit-configuration
            output, name=photo, kind=photo
            ^
            declaration-after-action.pipeline:5:1: error: 'overlay' declaration after the first action (at 3:1): declarations come first
            overlay, output=preview, clock=true
            ^
            declaration-after-action.pipeline:6:1: error: 'session' declaration after the first action (at 3:1): declarations come first
            session, preset=low
            ^
            """#
    ),
    CorpusCase(
        name: "action-kind-mismatch",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            input, name=mic, device=test-tone
            output, name=preview, kind=preview
            output, name=photo, kind=photo
            output, name=frames, kind=frames, input=mic
            start
            capture-photo, output=preview
            start-recording, output=photo
            configure-device, input=mic, torch-mode=on
            capture-photo, output=photo, interval=1
            """#,
        expected: #"""
            action-kind-mismatch.pipeline:5:35: error: output 'frames' takes its frames from input 'mic', which is an audio input (declared at 2:1); name a video input
            output, name=frames, kind=frames, input=mic
                                              ^
            action-kind-mismatch.pipeline:7:16: error: capture-photo needs a photo output; 'preview' is a preview output (declared at 3:1)
            capture-photo, output=preview
                           ^
            action-kind-mismatch.pipeline:8:18: error: start-recording needs a movie output; 'photo' is a photo output (declared at 4:1)
            start-recording, output=photo
                             ^
            action-kind-mismatch.pipeline:9:19: error: configure-device sets camera controls; 'mic' is an audio input (declared at 2:1)
            configure-device, input=mic, torch-mode=on
                              ^
            action-kind-mismatch.pipeline:10:30: error: interval is the time between photos: it applies when count is above 1
            capture-photo, output=photo, interval=1
                                         ^
            """#
    ),
    CorpusCase(
        name: "configuration-blocks",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview
            start
            commit-configuration
            begin-configuration
            remove-output, name=preview
            wait, duration=1
            begin-configuration, expect-error=true
            commit-configuration
            begin-configuration
            """#,
        expected: #"""
            configuration-blocks.pipeline:4:1: error: commit-configuration without a matching begin-configuration
            commit-configuration
            ^
            configuration-blocks.pipeline:5:1: error: begin-configuration is never committed: add commit-configuration after the block's statements
            begin-configuration
            ^
            configuration-blocks.pipeline:7:1: error: 'wait' cannot be inside a configuration block (begun at 5:1): only add-input, add-output, remove-input, remove-output and set-preset are applied at commit-configuration; commit the block first
            wait, duration=1
            ^
            configuration-blocks.pipeline:8:22: error: 'begin-configuration' cannot fail, so it cannot carry expect-error; put expect-error on commit-configuration, where the block is applied
            begin-configuration, expect-error=true
                                 ^
            configuration-blocks.pipeline:10:1: error: begin-configuration is never committed: add commit-configuration after the block's statements
            begin-configuration
            ^
            """#
    ),
    CorpusCase(
        name: "expect-error-values",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            start, expect-error=devce-busy
            stop, expect-error=true
            wait, duration=1, expect-error=true
            start, expect-error=5
            expect, event=session-started, count=1, expect-error=true
            """#,
        expected: #"""
            expect-error-values.pipeline:2:8: error: expect-error must be true, false or an error name, got devce-busy (did you mean 'device-busy'?); error names: {ERROR_NAMES}
            start, expect-error=devce-busy
                   ^
            expect-error-values.pipeline:3:7: error: 'stop' cannot fail, so it cannot carry expect-error
            stop, expect-error=true
                  ^
            expect-error-values.pipeline:4:19: error: 'wait' cannot fail, so it cannot carry expect-error; a wait with duration= always succeeds (a wait with event= can time out)
            wait, duration=1, expect-error=true
                              ^
            expect-error-values.pipeline:5:8: error: expect-error must be true, false or an error name (like device-busy), got 5
            start, expect-error=5
                   ^
            expect-error-values.pipeline:6:41: error: 'expect' cannot fail, so it cannot carry expect-error
            expect, event=session-started, count=1, expect-error=true
                                                    ^
            """#
    ),
    CorpusCase(
        name: "missing-file-device",
        overrides: [],
        source: #"""
            input, name=replay, device=file:no-such-clip.mp4
            input, name=other, device=file:
            """#,
        expected: #"""
            missing-file-device.pipeline:1:21: error: the device 'file:no-such-clip.mp4' does not exist (no media file at /work/corpus/no-such-clip.mp4); run `capture devices` to list the devices of this machine, or name an existing file
            input, name=replay, device=file:no-such-clip.mp4
                                ^
            missing-file-device.pipeline:2:20: error: device file: needs a path, like device=file:clip.mp4
            input, name=other, device=file:
                               ^
            """#
    ),
    CorpusCase(
        name: "syntax-errors",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern, pattern="ball
            input name=camera
            output, name=photo, kind=photo, location=IMG_%04d.jpg
            output, name=p, kind
            start; stop
            output, name=x, kind=preview, kind=frames
            output, name=y, kind=(GstCaps)preview
            output, name=z,, kind=preview
            wait, duration=(int)1.5
            expect, event={ { { { { { { { { { a } } } } } } } } } }, count=1
            """#,
        expected: #"""
            syntax-errors.pipeline:1:50: error: unterminated string in the value of 'pattern': a closing '"' is missing
            input, name=camera, device=test-pattern, pattern="ball
                                                             ^
            syntax-errors.pipeline:2:7: error: expected ',' after the statement name 'input', found 'n'; write 'name, key=value, ...'
            input name=camera
                  ^
            syntax-errors.pipeline:3:46: error: unexpected '%' in the value of 'location': quote values that hold characters other than letters, digits and _-+/:. (location="...")
            output, name=photo, kind=photo, location=IMG_%04d.jpg
                                                         ^
            syntax-errors.pipeline:4:21: error: expected '=' after the key 'kind', found the end of the statement
            output, name=p, kind
                                ^
            syntax-errors.pipeline:5:8: error: one statement per line: unexpected text after ';'
            start; stop
                   ^
            syntax-errors.pipeline:6:31: error: the key 'kind' is given twice (first at 6:17); give it once
            output, name=x, kind=preview, kind=frames
                                          ^
            syntax-errors.pipeline:7:23: error: unsupported type (GstCaps) for 'kind': use (string), (int), (int64), (uint), (double), (float), (boolean) or (fraction)
            output, name=y, kind=(GstCaps)preview
                                  ^
            syntax-errors.pipeline:8:16: error: empty field: two commas in a row
            output, name=z,, kind=preview
                           ^
            syntax-errors.pipeline:9:21: error: cannot read the value of 'duration': (int)1.5 is not a valid (int) value
            wait, duration=(int)1.5
                                ^
            syntax-errors.pipeline:10:31: error: the value of 'event' nests lists more than 8 deep
            expect, event={ { { { { { { { { { a } } } } } } } } } }, count=1
                                          ^
            """#
    ),
    CorpusCase(
        name: "continuation-lines",
        overrides: [],
        source: #"""
            input, name=camera, \
                  device=test-pattern, \
                  pattern=snowy   # not a pattern
            output, name=preview, \
                kind=preview, sink=none, # a comment with "quotes"
            output, name=frames, kind=frames, \
                location="dir#1/%04d.png"   # '#' inside quotes is not a comment
            """#,
        expected: #"""
            continuation-lines.pipeline:3:7: error: pattern must be smpte, snow, black, white, red, green, blue, checkers-1, checkers-2, checkers-4, checkers-8, circular, blink, smpte75, zone-plate, gamut, chroma-zone-plate, solid-color, ball, smpte100, bar, pinwheel, spokes, gradient, colors or smpte-rp-219, got snowy (did you mean 'snow'?)
                  pattern=snowy   # not a pattern
                  ^
            """#
    ),
    CorpusCase(
        name: "tabs",
        overrides: [],
        source: "input,\tname=camera,\tdevice=test-pattern,\tsize=1280by720",
        expected:
            "tabs.pipeline:1:42: error: size must be WIDTHxHEIGHT like \"1280x720\" (each from 1 to 16384), got 1280by720\ninput,\tname=camera,\tdevice=test-pattern,\tsize=1280by720\n      \t            \t                    \t^"
    ),
    CorpusCase(
        name: "overrides",
        overrides: ["ghost.device=test-pattern", "camera.sise=1280x720", "camera.pattern=balls", "session.preset=bogus", "nodot=1", "camera.name=other"],
        source: #"""
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview
            """#,
        expected: #"""
            --set:1:1: error: --set names 'ghost', but no input or output is named 'ghost'; names in this file: camera, preview; use session.preset=... for the session
            ghost.device=test-pattern
            ^
            --set:2:8: error: unknown key 'sise' for 'input' (did you mean 'size'?); allowed keys: name, device, media, pattern, size, framerate, fail-after, reconnect, fallback
            camera.sise=1280x720
                   ^
            --set:3:8: error: pattern must be smpte, snow, black, white, red, green, blue, checkers-1, checkers-2, checkers-4, checkers-8, circular, blink, smpte75, zone-plate, gamut, chroma-zone-plate, solid-color, ball, smpte100, bar, pinwheel, spokes, gradient, colors or smpte-rp-219, got balls (did you mean 'ball'?)
            camera.pattern=balls
                   ^
            --set:4:9: error: preset must be photo, high, medium, low, cif352x288, vga640x480, hd1280x720, hd1920x1080, hd4K3840x2160 or input-priority, got bogus
            session.preset=bogus
                    ^
            --set:5:1: error: expected NAME.KEY=VALUE, like camera.device=test-pattern or session.preset=hd1280x720
            nodot=1
            ^
            --set:6:8: error: the name of 'camera' cannot be changed with --set (statements refer to it)
            camera.name=other
                   ^
            """#
    ),
    CorpusCase(
        name: "repeat-bodies",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview
            start
            repeat, count=3, actions={ "add-output, name=extra, kind=preview", "wiat, duration=1", "wait, duration=\"soon\"" }
            repeat, count=2, actions={ "input, name=x", "expect, event=session-started, count=1", 5 }
            repeat, count=0, actions={ }
            repeat, count=2, actions={ "begin-configuration", "remove-output, name=preview" }
            """#,
        expected: #"""
            repeat-bodies.pipeline:4:41: error: duplicate name 'extra': first declared at 4:29; inputs and outputs need unique names (on the second time through the repeat at 4:1)
            repeat, count=3, actions={ "add-output, name=extra, kind=preview", "wiat, duration=1", "wait, duration=\"soon\"" }
                                                    ^
            repeat-bodies.pipeline:4:69: error: unknown statement 'wiat' (did you mean 'wait'?); known statements: declarations session, input, output, overlay; actions start, stop, wait, capture-photo, start-recording, stop-recording, pause-recording, resume-recording, begin-configuration, commit-configuration, add-input, add-output, remove-input, remove-output, set-preset, configure-device, add-overlay, set-overlay, remove-overlay, toggle-flash, switch-camera, trim-video, generate-thumbnail, pick-from-library, expect, repeat
            repeat, count=3, actions={ "add-output, name=extra, kind=preview", "wiat, duration=1", "wait, duration=\"soon\"" }
                                                                                ^
            repeat-bodies.pipeline:4:95: error: duration must be a number of seconds up to 1000000000 (2.5) or a string with a unit ("500ms", "2s", "1.5m"), got "soon"
            repeat, count=3, actions={ "add-output, name=extra, kind=preview", "wiat, duration=1", "wait, duration=\"soon\"" }
                                                                                                          ^
            repeat-bodies.pipeline:5:29: error: 'input' is a declaration and cannot be repeated; declarations come before the scenario
            repeat, count=2, actions={ "input, name=x", "expect, event=session-started, count=1", 5 }
                                        ^
            repeat-bodies.pipeline:5:46: error: expect cannot be repeated: write it once, after the repeat, with the total count
            repeat, count=2, actions={ "input, name=x", "expect, event=session-started, count=1", 5 }
                                                         ^
            repeat-bodies.pipeline:5:87: error: each item of actions must be a statement in double quotes, like "wait, duration=1"; got 5
            repeat, count=2, actions={ "input, name=x", "expect, event=session-started, count=1", 5 }
                                                                                                  ^
            repeat-bodies.pipeline:6:9: error: count must be an integer from 1 to 1000000, got 0
            repeat, count=0, actions={ }
                    ^
            repeat-bodies.pipeline:6:18: error: actions must hold at least one statement, like actions={ "wait, duration=1" }
            repeat, count=0, actions={ }
                             ^
            repeat-bodies.pipeline:7:29: error: begin-configuration is never committed: add commit-configuration after the block's statements
            repeat, count=2, actions={ "begin-configuration", "remove-output, name=preview" }
                                        ^
            repeat-bodies.pipeline:7:67: error: output 'preview' was already removed at 7:52 (on the second time through the repeat at 7:1)
            repeat, count=2, actions={ "begin-configuration", "remove-output, name=preview" }
                                                                              ^
            """#
    ),
    CorpusCase(
        name: "movie-consistency",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            output, name=web, kind=movie, location=clip.webm, video-codec=mjpeg
            output, name=web2, kind=movie, container=webm, video-codec=h264, audio-codec=aac
            output, name=mp4, kind=movie, location=clip.mkv, container=mp4, bitrate=500
            output, name=mj, kind=movie, location=clip.mov, video-codec=mjpeg, bitrate="2Mbps"
            output, name=photo, kind=photo, location=shot.jpg, codec=png, quality=80
            output, name=photo2, kind=photo, location=shot.gif
            """#,
        expected: #"""
            movie-consistency.pipeline:2:51: error: a webm movie holds vp8 or vp9 video, not mjpeg
            output, name=web, kind=movie, location=clip.webm, video-codec=mjpeg
                                                              ^
            movie-consistency.pipeline:3:48: error: a webm movie holds vp8 or vp9 video, not h264
            output, name=web2, kind=movie, container=webm, video-codec=h264, audio-codec=aac
                                                           ^
            movie-consistency.pipeline:3:66: error: a webm movie holds opus audio, not aac
            output, name=web2, kind=movie, container=webm, video-codec=h264, audio-codec=aac
                                                                             ^
            movie-consistency.pipeline:4:31: error: location 'clip.mkv' ends in .mkv but container is mp4; make them agree
            output, name=mp4, kind=movie, location=clip.mkv, container=mp4, bitrate=500
                                          ^
            movie-consistency.pipeline:4:65: error: bitrate must be at least 1000 bits per second, got 500
            output, name=mp4, kind=movie, location=clip.mkv, container=mp4, bitrate=500
                                                                            ^
            movie-consistency.pipeline:5:68: error: bitrate does not apply to mjpeg video, which is quality-based; leave it out
            output, name=mj, kind=movie, location=clip.mov, video-codec=mjpeg, bitrate="2Mbps"
                                                                               ^
            movie-consistency.pipeline:6:33: error: location 'shot.jpg' ends in .jpg but codec is png; make them agree
            output, name=photo, kind=photo, location=shot.jpg, codec=png, quality=80
                                            ^
            movie-consistency.pipeline:6:63: error: quality applies to JPEG photos only (codec is png)
            output, name=photo, kind=photo, location=shot.jpg, codec=png, quality=80
                                                                          ^
            movie-consistency.pipeline:7:34: error: location 'shot.gif' must end in .jpg, .jpeg or .png
            output, name=photo2, kind=photo, location=shot.gif
                                             ^
            """#
    ),
    CorpusCase(
        name: "input-priority",
        overrides: [],
        source: #"""
            session, preset=hd1280x720
            input, name=camera, device=test-pattern, size=1920x1080, framerate=30
            """#,
        expected: #"""
            input-priority.pipeline:2:42: error: size applies only with the input-priority preset (session, preset=input-priority); with preset hd1280x720 the preset chooses the device format
            input, name=camera, device=test-pattern, size=1920x1080, framerate=30
                                                     ^
            input-priority.pipeline:2:58: error: framerate applies only with the input-priority preset (session, preset=input-priority); with preset hd1280x720 the preset chooses the device format
            input, name=camera, device=test-pattern, size=1920x1080, framerate=30
                                                                     ^
            """#
    ),
    CorpusCase(
        name: "test-pattern-presets",
        overrides: [],
        source: #"""
            session, preset=input-priority
            input, name=camera, device=test-pattern, size=4000x3000
            """#,
        expected: #"""
            test-pattern-presets.pipeline:2:1: error: the session preset 'input-priority' cannot be served by input 'camera': the device offers no 4000x3000 format (it offers 3840x2160, 1920x1080, 1280x720, 640x480, 480x360, 352x288, 320x240, 192x144)
            input, name=camera, device=test-pattern, size=4000x3000
            ^
            """#
    ),
    CorpusCase(
        name: "input-rules",
        overrides: [],
        source: #"""
            input, name=camera, device=/dev/video0, fail-after=10
            input, name=tone, device=test-tone, media=video, pattern=ball
            input, name="my camera", device=test-pattern
            input, name=slow, device=test-pattern, fail-after=0, framerate=0
            """#,
        expected: #"""
            input-rules.pipeline:1:41: error: fail-after is a fault injection of the virtual devices (test-pattern, test-tone, file:) only; '/dev/video0' is a real device
            input, name=camera, device=/dev/video0, fail-after=10
                                                    ^
            input-rules.pipeline:2:37: error: the device 'test-tone' captures audio, not video (media=video)
            input, name=tone, device=test-tone, media=video, pattern=ball
                                                ^
            input-rules.pipeline:2:50: error: pattern applies only to device=test-pattern (this input's device is 'test-tone')
            input, name=tone, device=test-tone, media=video, pattern=ball
                                                             ^
            input-rules.pipeline:3:8: error: the name 'my camera' must start with a letter and hold only letters, digits, '-' and '_'
            input, name="my camera", device=test-pattern
                   ^
            input-rules.pipeline:4:40: error: fail-after must be an integer from 1 to 2147483647, got 0
            input, name=slow, device=test-pattern, fail-after=0, framerate=0
                                                   ^
            input-rules.pipeline:4:54: error: framerate must be frames per second above 0 and up to 1000: 30, 29.97 or 30000/1001, got 0
            input, name=slow, device=test-pattern, fail-after=0, framerate=0
                                                                 ^
            """#
    ),
    CorpusCase(
        name: "overlays",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview
            output, name=codes, kind=metadata
            overlay, output=preview
            overlay, output=preview, image=logo.jpg
            overlay, output=codes, text="x"
            """#,
        expected: #"""
            overlays.pipeline:4:1: error: the overlay draws nothing: give text=, clock=, image=, rectangle=, line= or polygon=
            overlay, output=preview
            ^
            overlays.pipeline:5:26: error: image must be a PNG file (.png), got 'logo.jpg'
            overlay, output=preview, image=logo.jpg
                                     ^
            overlays.pipeline:6:17: error: an overlay draws on a video output; 'codes' is a metadata output (declared at 3:1)
            overlay, output=codes, text="x"
                            ^
            """#
    ),
    CorpusCase(
        name: "control-characters",
        overrides: [],
        source: "input, name=camera, device=test-pattern\u{7}",
        expected:
            "control-characters.pipeline:1:40: error: control character U+0007 in the statement; remove it\ninput, name=camera, device=test-pattern\\u{7}\n                                       ^"
    ),
    CorpusCase(
        name: "wait-and-expect",
        overrides: [],
        source: #"""
            input, name=camera, device=test-pattern
            start
            wait, event=photo-saved, duration=1
            wait, duration=1, count=2
            wait, event=photo-taken
            expect, event=session-started, count=1, at-least=1
            expect, event=session-started, count=-1
            """#,
        expected: #"""
            wait-and-expect.pipeline:3:7: error: wait takes duration= or event=, not both
            wait, event=photo-saved, duration=1
                  ^
            wait-and-expect.pipeline:4:19: error: count applies only to a wait with event=; this wait has duration=
            wait, duration=1, count=2
                              ^
            wait-and-expect.pipeline:5:7: error: event must be session-started, session-stopped, configuration-committed, runtime-error, interrupted, interruption-ended, resumed, device-connected, device-disconnected, photo-captured, photo-saved, recording-started, recording-paused, recording-resumed, recording-finished, action-failed, code-detected, codes-in-frame, frame-dropped, frame-saved, device-configured, saved-to-library, video-trimmed, thumbnail-generated, library-item-picked, stream-ready, stream-client-connected, stream-client-disconnected, stream-connected or stream-disconnected, got photo-taken (did you mean 'photo-saved'?)
            wait, event=photo-taken
                  ^
            wait-and-expect.pipeline:6:41: error: expect takes count= or at-least=, not both
            expect, event=session-started, count=1, at-least=1
                                                    ^
            wait-and-expect.pipeline:7:32: error: count must be an integer from 0 to 1000000, got -1
            expect, event=session-started, count=-1
                                           ^
            """#
    ),
    CorpusCase(
        name: "trim-and-thumbnail-values",
        overrides: [],
        source: #"""
            output, name=movie, kind=movie
            start
            trim-video, recording=movie, from=3, to=1, location="cut.avi"
            trim-video, input="a.mp4", recording=movie, from=0, to=1, location="cut.mp4"
            generate-thumbnail, recording=photo, at="120%", location="thumb.gif"
            """#,
        expected: #"""
            trim-and-thumbnail-values.pipeline:3:38: error: from (3 s) must come before to (1 s)
            trim-video, recording=movie, from=3, to=1, location="cut.avi"
                                                 ^
            trim-and-thumbnail-values.pipeline:3:44: error: location 'cut.avi' must end in .mp4, .m4v, .mkv, .webm or .mov (it chooses the container)
            trim-video, recording=movie, from=3, to=1, location="cut.avi"
                                                       ^
            trim-and-thumbnail-values.pipeline:4:28: error: trim-video reads one video: give one of input=, recording= and picked=, not input= and recording=
            trim-video, input="a.mp4", recording=movie, from=0, to=1, location="cut.mp4"
                                       ^
            trim-and-thumbnail-values.pipeline:5:21: error: no output named 'photo'; outputs: movie
            generate-thumbnail, recording=photo, at="120%", location="thumb.gif"
                                ^
            trim-and-thumbnail-values.pipeline:5:38: error: at must be a time in seconds (2.5, "500ms") or a share of the duration ("50%"), got "120%"
            generate-thumbnail, recording=photo, at="120%", location="thumb.gif"
                                                 ^
            trim-and-thumbnail-values.pipeline:5:49: error: location 'thumb.gif' must end in .jpg, .jpeg or .png
            generate-thumbnail, recording=photo, at="120%", location="thumb.gif"
                                                            ^
            """#
    ),
]
