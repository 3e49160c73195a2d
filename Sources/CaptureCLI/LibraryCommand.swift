import Capture
import Foundation

enum LibraryCommand {
    static let help = """
        usage: capture library [list] [--kind photo|video] [--json]
               capture library add FILE... [--crop X,Y,W,H] [--size WxH] [--json]
               capture library path [--json]

        The saved photos and videos album: the user's Pictures and Videos folders (XDG user directories;
        CAPTURE_PICTURES_DIR and CAPTURE_VIDEOS_DIR override them, as --pictures and --videos do).
          list                newest first: date, kind, size, dimensions, duration, path
          add FILE...         saves copies of photos (JPEG, PNG) and videos (checked compatible: MP4, MOV, MKV,
                              WebM with H.264, H.265, VP8, VP9, AV1 or MJPEG video); a taken name becomes
                              name-1.ext; the files are only read
            --crop X,Y,W,H    the picker's editing step for photos: keep this part (normalized 0-1)
            --size WxH        ... and scale it to fit inside WxH
          path                the two folders
          --kind photo|video  list only photos or videos
          --json              JSON on stdout (list and path: one object; add: one object per file)
        Exit: 0; 1 when a file could not be saved (the message says why: not writable, disk full); 65 for a
        file that is not a photo or a compatible video.
        """

    static let spec = Arguments.Spec(options: ["kind", "crop", "size", "pictures", "videos"], flags: ["json"])

    enum Action: Equatable { case list, add([String]), path }

    struct Options {
        var action: Action
        var kind: MediaLibrary.MediaKind?
        var crop: NormalizedRect?
        var size: Size?
        var pictures: String?
        var videos: String?
        var json = false
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        let words = parsed.positionals
        let action: Action
        switch words.first {
        case nil, "list":
            guard words.count <= 1 else { throw Arguments.UsageError(description: "unexpected argument '\(words[1])' after list") }
            action = .list
        case "path":
            guard words.count == 1 else { throw Arguments.UsageError(description: "unexpected argument '\(words[1])' after path") }
            action = .path
        case "add":
            guard words.count > 1 else { throw Arguments.UsageError(description: "add needs the FILE to save") }
            action = .add(Array(words.dropFirst()))
        case let word?:
            throw Arguments.UsageError(description: "unknown library action '\(word)'; the actions are list, add, path")
        }
        let kind = try parsed.value("kind").map { text throws(Arguments.UsageError) -> MediaLibrary.MediaKind in
            guard let kind = MediaLibrary.MediaKind(rawValue: text) else {
                throw Arguments.UsageError(description: "--kind must be photo or video, not '\(text)'")
            }
            return kind
        }
        if kind != nil, action != .list { throw Arguments.UsageError(description: "--kind goes with list") }
        let crop = try parsed.normalizedRect("crop"), size = try parsed.size("size")
        if crop != nil || size != nil, case .add = action {
        } else if crop != nil || size != nil {
            throw Arguments.UsageError(description: "--\(crop != nil ? "crop" : "size") goes with add")
        }
        for folder in ["pictures", "videos"] where parsed.value(folder)?.isEmpty == true {
            throw Arguments.UsageError(description: "--\(folder) needs a folder")
        }
        return Options(
            action: action, kind: kind, crop: crop, size: size, pictures: parsed.value("pictures"), videos: parsed.value("videos"),
            json: parsed.flag("json"))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        var library = MediaLibrary.user()
        if let pictures = options.pictures { library.picturesFolder = pictures }
        if let videos = options.videos { library.videosFolder = videos }
        switch options.action {
        case .path:
            if options.json {
                print(jsonObject([("pictures", .string(library.picturesFolder)), ("videos", .string(library.videosFolder))]))
            } else {
                print("pictures: \(FileNaming.printable(library.picturesFolder))")
                print("videos: \(FileNaming.printable(library.videosFolder))")
            }
            return ExitCode.success
        case .list:
            let items = library.items(of: options.kind)
            if options.json {
                print("[" + items.map { jsonObject(fields(of: $0)) }.joined(separator: ",\n ") + "]")
            } else if items.isEmpty {
                printError("the library is empty (\(FileNaming.printable(library.picturesFolder)), \(FileNaming.printable(library.videosFolder)))")
            } else {
                for item in items { print(line(for: item)) }
            }
            return ExitCode.success
        case .add(let files):
            var status = ExitCode.success
            for file in files {
                do throws(CaptureError) {
                    let item: MediaLibrary.Item
                    if options.crop != nil || options.size != nil {
                        let edit = try await ImageEditor.edit(imageAt: file, crop: options.crop, size: options.size)
                        item = try await library.save(photoData: edit.editedImage)
                        let rect = edit.cropRect
                        printError(
                            "edited \(FileNaming.printable(file)) (\(edit.originalWidth)x\(edit.originalHeight)): crop \(rect.width)x\(rect.height)+\(rect.x)+\(rect.y), scaled to \(edit.width)x\(edit.height)"
                        )
                    } else {
                        item = try await library.save(fileAt: file)
                    }
                    print(
                        options.json ? jsonObject([("source", .string(file))] + fields(of: item)) : "saved \(FileNaming.printable(file)) as \(line(for: item))")
                } catch {
                    printError(error.description)
                    status = max(status, CommandLineTool.exitCode(for: error))
                }
            }
            return status
        }
    }

    static func fields(of item: MediaLibrary.Item) -> [(String, EventValue)] {
        var fields: [(String, EventValue)] = [
            ("path", .string(item.path)), ("kind", .string(item.kind.rawValue)), ("size", .int(Int(item.size))),
            ("date", .string(ISO8601DateFormatter().string(from: item.date))),
        ]
        if let width = item.width, let height = item.height { fields += [("width", .int(width)), ("height", .int(height))] }
        if let duration = item.duration { fields.append(("duration", .double(duration))) }
        return fields
    }

    static func line(for item: MediaLibrary.Item) -> String {
        let dimensions = item.width.flatMap { width in item.height.map { "\(width)x\($0)" } } ?? "?"
        let duration = item.duration.map { String(format: "  %.2f s", $0) } ?? ""
        return
            "\(ISO8601DateFormatter().string(from: item.date))  \(item.kind.rawValue)  \(item.size) B  \(dimensions)\(duration)  \(FileNaming.printable(item.path))"
    }
}
