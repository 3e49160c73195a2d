import Capture
import CaptureControl
import Foundation

/// The camera roll of the web app: the picker's list and pick, the crop step after a shot, the trim
/// editor's preview frames, its trim and the thumbnail at a time. Each request becomes one call of the
/// session's `SessionController` as a remote caller: the names it carries are confined there
/// (`RemoteAccess`), and what they cost (folders read, media decoded, files written) runs on threads
/// of its own. Here only the JSON and the query are read, checked for their types, and answered.
extension CaptureWebServer {
    static let rollRoutes: Set<String> = [
        "/api/picker", "/api/picker/item", "/api/picker/preview", "/api/crop", "/api/frame", "/api/trim", "/api/thumbnail",
    ]

    /// The answer to a camera-roll route, or nil when the request is not one.
    func handleRoll(_ request: HTTPRequest) async -> HTTPResponse? {
        switch (request.method, request.path) {
        case ("GET", "/api/picker"): return await pickerList(request.query)
        case ("GET", "/api/picker/item"): return await pick(request.query)
        case ("GET", "/api/picker/preview"): return await preview(request.query)
        case ("POST", "/api/crop"): return await crop(request.jsonObject ?? [:])
        case ("GET", "/api/frame"): return await frame(request.query)
        case ("POST", "/api/trim"): return await trim(request.jsonObject ?? [:])
        case ("POST", "/api/thumbnail"): return await thumbnail(request.jsonObject ?? [:])
        default: return nil
        }
    }

    /// A request that cannot be read as asked: the status and the words the answer carries.
    struct BadRequest: Error {
        let message: String
        init(_ message: String) { self.message = message }
        var response: HTTPResponse { .error(.badRequest, "bad-request", message) }
    }

    // MARK: Picker

    func pickerList(_ query: [String: String]) async -> HTTPResponse {
        guard let controller else { return .error(.conflict, "not-running", "the session is not set up") }
        var kind: MediaLibrary.MediaKind?
        if let text = query["kind"], !text.isEmpty, text != "all" {
            guard let value = MediaLibrary.MediaKind(rawValue: text) else { return BadRequest("kind is photo, video or all").response }
            kind = value
        }
        guard let order = MediaQuery.Order(rawValue: query["order"] ?? "newest") else { return BadRequest("order is newest or name").response }
        let limit = query["limit"].map { Int($0) ?? -1 } ?? 200
        guard limit > 0 else { return BadRequest("limit is a positive whole number").response }
        let items = await controller.mediaItems(MediaQuery(kind: kind, order: order, limit: limit))
        return .json(["items": items.map(Self.json(of:))])
    }

    func pick(_ query: [String: String]) async -> HTTPResponse {
        guard let name = query["name"] else { return BadRequest("send ?name=NAME, a name /api/picker listed").response }
        return await withController { controller throws(CaptureError) in
            ["item": Self.json(of: try await controller.pickMedia(name, as: .remote))]
        }
    }

    /// An item as the page knows it: its name, its URL, what it is; sizes and duration when read.
    static func json(of entry: MediaEntry) -> [String: Any] {
        var item: [String: Any] = [
            "name": entry.name, "kind": entry.kind.rawValue, "size": entry.size, "modified": entry.modified.timeIntervalSince1970,
            "album": entry.inAlbum, "url": mediaURL(entry.name),
        ]
        if let width = entry.width, let height = entry.height { (item["width"], item["height"]) = (width, height) }
        if let duration = entry.duration { item["duration"] = duration }
        return item
    }

    /// The download URL of a name (`/media/` and its parts escaped).
    static func mediaURL(_ name: String) -> String {
        "/media/" + name.split(separator: "/").map { pathEscape(String($0)) }.joined(separator: "/")
    }

    // MARK: Crop

    func crop(_ body: [String: Any]) async -> HTTPResponse {
        let request: ImageEditRequest
        do {
            let rect = try Self.object(body["crop"], "crop", keys: ["x", "y", "width", "height"])
            request = ImageEditRequest(
                source: try Self.string(body["source"], "source"), crop: NormalizedRect(x: rect[0], y: rect[1], width: rect[2], height: rect[3]),
                size: try Self.size(body["size"]), location: try Self.optionalString(body["location"], "location"))
        } catch {
            return (error as? BadRequest)?.response ?? BadRequest("\(error)").response
        }
        return await withController { controller throws(CaptureError) in
            let edit = try await controller.editImage(request, as: .remote)
            return [
                "ok": true, "original": Self.json(of: edit.original), "edited": Self.json(of: edit.edited),
                "cropRect": ["x": edit.cropX, "y": edit.cropY, "width": edit.cropWidth, "height": edit.cropHeight],
            ]
        }
    }

    // MARK: Video

    /// One frame of a video as a JPEG, made in memory (no file is written): the trim editor's ends.
    func frame(_ query: [String: String]) async -> HTTPResponse {
        guard let source = query["source"], !source.isEmpty else { return BadRequest("send ?source=NAME&time=SECONDS").response }
        guard let time = query["time"].flatMap(Double.init), time.isFinite, time >= 0 else {
            return BadRequest("time is a number of seconds from the start").response
        }
        return await jpeg(query) { controller, size throws(CaptureError) in
            let image = try await controller.videoFrames(of: .file(source), at: [.seconds(time)], maximumSize: size, as: .remote)[0]
            return PreviewImage(data: image.data, width: image.width, height: image.height, time: image.actualTime)
        }
    }

    /// An item of the picker's grid as a small JPEG, made in memory: a photo scaled, a video's first frame.
    func preview(_ query: [String: String]) async -> HTTPResponse {
        guard let name = query["name"], !name.isEmpty else { return BadRequest("send ?name=NAME, a name /api/picker listed").response }
        return await jpeg(query) { controller, size throws(CaptureError) in try await controller.previewImage(of: name, maximumSize: size, as: .remote) }
    }

    /// An image made for `?size=N` (16...1920, 320 by default) as `image/jpeg`; a video frame's time
    /// in `X-Frame-Time`.
    func jpeg(_ query: [String: String], _ make: (SessionController, Size) async throws(CaptureError) -> PreviewImage) async -> HTTPResponse {
        guard let controller else { return .error(.conflict, "not-running", "the session is not set up") }
        let side = query["size"].map { Int($0) ?? 0 } ?? 320
        guard (16...SessionController.maximumPreviewSide).contains(side) else {
            return BadRequest("size is 16...\(SessionController.maximumPreviewSide) pixels").response
        }
        do throws(CaptureError) {
            let image = try await make(controller, Size(width: side, height: side))
            var headers: [(name: String, value: String)] = [("Content-Type", "image/jpeg")]
            if let time = image.time { headers.append(("X-Frame-Time", String(time))) }
            return HTTPResponse(headers: headers, body: .bytes(image.data))
        } catch {
            return Self.failureResponse(error)
        }
    }

    /// A trimmed copy (`trim`), frame-exact unless `mode` says `keyframe`; by default next to the
    /// source as `NAME-trim.EXT`.
    func trim(_ body: [String: Any]) async -> HTTPResponse {
        let command: ControlCommand
        do {
            let source = try Self.string(body["source"], "source")
            let mode = try Self.optionalString(body["mode"], "mode").map { text throws -> VideoEditor.TrimMode in
                guard let mode = VideoEditor.TrimMode(rawValue: text) else { throw BadRequest("mode is exact or keyframe") }
                return mode
            }
            let ext = (source as NSString).pathExtension.lowercased()
            let location = try Self.optionalString(body["location"], "location") ?? derivedName(source, "-trim", ext.isEmpty ? "mp4" : ext)
            command = .trim(
                VideoTrimRequest(
                    source: .file(source), from: try Self.number(body["from"], "from"), to: try Self.number(body["to"], "to"), location: location,
                    mode: mode ?? .exact))
        } catch {
            return (error as? BadRequest)?.response ?? BadRequest("\(error)").response
        }
        return await perform(command)
    }

    /// The image of a video at a time (`thumbnail`), written to a new file; by default next to the
    /// source as `NAME-SECONDSs.jpg`.
    func thumbnail(_ body: [String: Any]) async -> HTTPResponse {
        let command: ControlCommand
        do {
            let source = try Self.string(body["source"], "source")
            let time = try Self.number(body["time"], "time")
            let seconds = String(format: "%.2f", time)
            let location = try Self.optionalString(body["location"], "location") ?? derivedName(source, "-\(seconds)s", "jpg")
            command = .thumbnail(
                VideoThumbnailRequest(source: .file(source), time: .seconds(time), maximumSize: try Self.size(body["size"]), location: location))
        } catch {
            return (error as? BadRequest)?.response ?? BadRequest("\(error)").response
        }
        return await perform(command)
    }

    func derivedName(_ source: String, _ suffix: String, _ ext: String) -> String {
        controller?.folders.derivedName(for: source, suffix: suffix, extension: ext) ?? source + suffix + "." + ext
    }

    // MARK: Reading the request

    /// Calls the controller; a `CaptureError` becomes the status `status(for:)` gives it.
    func withController(_ work: (SessionController) async throws(CaptureError) -> [String: Any]) async -> HTTPResponse {
        guard let controller else { return .error(.conflict, "not-running", "the session is not set up") }
        do throws(CaptureError) { return .json(try await work(controller)) } catch { return Self.failureResponse(error) }
    }

    static func string(_ value: Any?, _ key: String) throws -> String {
        guard let text = value as? String, !text.isEmpty else { throw BadRequest("\(key) is a name (a string), e.g. IMG_0001.jpg") }
        return text
    }

    static func optionalString(_ value: Any?, _ key: String) throws -> String? {
        value == nil || value is NSNull ? nil : try string(value, key)
    }

    /// A finite JSON number. `true` and `false` are not numbers: Foundation reads them as NSNumbers
    /// of type `c` (a JSON number is an integer or a double).
    static func number(_ value: Any?, _ key: String) throws -> Double {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c", number.doubleValue.isFinite else {
            throw BadRequest("\(key) is a number")
        }
        return number.doubleValue
    }

    /// The numbers of an object's keys, in the order given.
    static func object(_ value: Any?, _ key: String, keys: [String]) throws -> [Double] {
        guard let object = value as? [String: Any] else { throw BadRequest("\(key) is {\(keys.map { "\"\($0)\": N" }.joined(separator: ", "))}") }
        return try keys.map { try number(object[$0], "\(key).\($0)") }
    }

    /// An optional `{"width": W, "height": H}` of whole pixels, 16...4096 each.
    static func size(_ value: Any?) throws -> Size? {
        guard value != nil, !(value is NSNull) else { return nil }
        let sides = try object(value, "size", keys: ["width", "height"])
        guard sides.allSatisfy({ $0 == $0.rounded() && (16...4096).contains($0) }) else { throw BadRequest("size's width and height are 16...4096 pixels") }
        return Size(width: Int(sides[0]), height: Int(sides[1]))
    }
}
