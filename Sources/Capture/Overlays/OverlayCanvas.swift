import Foundation
import GStreamer

/// The overlays of one output. Changing them changes no element and no caps: the output's
/// `overlaycomposition` element asks the canvas what to draw on every frame, so a change shows from
/// the next frame that element sees, on a running session, with nothing restarted.
final class OverlayCanvas: Sendable {
    private struct State {
        var overlays: [PreparedOverlay] = []
        /// Bumped on every change; drawers re-render when it moves.
        var version = 0
    }
    private let state = Locked(State())
    /// The output's description, for errors.
    private let owner: String

    init(owner: String) { self.owner = owner }

    var overlays: [CaptureOverlay] { state.value.overlays.map(\.overlay) }

    /// Adds an overlay on top of the others; throws when one of the same name is already there or the
    /// overlay cannot be drawn (nothing changes then).
    func add(_ overlay: CaptureOverlay) throws(CaptureError) {
        let prepared = try OverlayRenderer.prepare(overlay)
        let added: Bool = state.withLock { state in
            guard !state.overlays.contains(where: { $0.overlay.name == overlay.name }) else { return false }
            state.overlays.append(prepared)
            state.version += 1
            return true
        }
        if !added { throw .invalidOverlay(overlay: overlay.name, key: "name", reason: "is already used by another overlay of \(owner)") }
    }

    /// Replaces the overlay of that name (in place, keeping its stacking order).
    func update(named name: String, _ change: (inout CaptureOverlay) -> Void) throws(CaptureError) {
        guard var overlay = overlays.first(where: { $0.name == name }) else { throw .unknownOverlay(name: name, output: nil) }
        change(&overlay)
        let prepared = try OverlayRenderer.prepare(overlay)
        let replaced: Bool = state.withLock { state in
            guard let index = state.overlays.firstIndex(where: { $0.overlay.name == name }) else { return false }
            // A rename must not take another overlay's name.
            if overlay.name != name && state.overlays.contains(where: { $0.overlay.name == overlay.name }) { return false }
            state.overlays[index] = prepared
            state.version += 1
            return true
        }
        if !replaced { throw .invalidOverlay(overlay: overlay.name, key: "name", reason: "is already used by another overlay of \(owner)") }
    }

    /// Removes the overlay of that name; false when there is none.
    @discardableResult
    func remove(named name: String) -> Bool {
        state.withLock { state in
            guard let index = state.overlays.firstIndex(where: { $0.overlay.name == name }) else { return false }
            state.overlays.remove(at: index)
            state.version += 1
            return true
        }
    }

    func contains(_ name: String) -> Bool { state.value.overlays.contains { $0.overlay.name == name } }

    fileprivate var snapshot: (overlays: [PreparedOverlay], version: Int) {
        let current = state.value
        return (current.overlays, current.version)
    }

    /// The drawer of each `overlaycomposition` element a canvas was connected to, by the element's
    /// address (weak: an element's "draw" handler keeps its drawer alive while the element lives).
    private static let drawers = Locked<[UInt: WeakDrawer]>([:])
    private final class WeakDrawer: @unchecked Sendable {
        // @unchecked: read and written only under `drawers`' lock.
        weak var drawer: OverlayDrawer?
        init(_ drawer: OverlayDrawer) { self.drawer = drawer }
    }

    /// Connects an `overlaycomposition` element to this canvas (each element gets a drawer of its own:
    /// the preview and the photo encoder draw the same overlays at different sizes). An element that
    /// outlives the output that connected it (a shared encoder's, which a recording still reads) keeps
    /// its drawer, and draws the canvas connected last; `disconnect` stops it drawing this one.
    /// `shownTurned`: the frames the element draws on are shown turned (a photo's EXIF Orientation,
    /// a movie's track matrix); the overlays are drawn so that they are upright as shown.
    @discardableResult
    func connect(_ element: Element, shownTurned turn: PixelTurn = .none) -> OverlayDrawer {
        let key = UInt(bitPattern: element.element)
        let drawer = Self.drawers.withLock { drawers -> OverlayDrawer in
            drawers = drawers.filter { $0.value.drawer != nil }
            if let existing = drawers[key]?.drawer { return existing }
            let made = OverlayDrawer()
            drawers[key] = WeakDrawer(made)
            return made
        }
        drawer.show(self, turned: turn)
        // Connected once per element (a second call for the same element does nothing).
        element.onOverlayDraw { frame in drawer.draw(frame) }
        return drawer
    }
}

/// Draws a canvas on the frames of one element, re-rendering only what changed: static overlays once
/// per change or frame size, a clock when its text changes.
final class OverlayDrawer: Sendable {
    private struct Cache {
        var version = -1
        var width = 0
        var height = 0
        /// Each overlay's picture, by position in the canvas, with the clock text it was drawn for.
        var pictures: [(picture: OverlayPicture?, clock: String?)] = []
        var composition: OverlayComposition?
    }
    private let canvas = Locked<OverlayCanvas?>(nil)
    private let cache = Locked(Cache())
    private let turn = Locked(PixelTurn.none)

    /// Draws `canvas` from the next frame on, upright on frames shown with `turned`.
    func show(_ canvas: OverlayCanvas, turned: PixelTurn = .none) {
        self.canvas.withLock { $0 = canvas }
        turn.value = turned
        cache.withLock { $0 = Cache() }
    }

    /// Stops drawing `canvas` (its output left); another canvas shown since stays.
    func hide(_ canvas: OverlayCanvas) {
        self.canvas.withLock { current in if current === canvas { current = nil } }
    }

    func draw(_ frame: OverlayFrame) -> OverlayComposition? {
        guard let canvas = canvas.value else { return nil }
        let (overlays, version) = canvas.snapshot
        guard !overlays.isEmpty else { return nil }
        let now = Date()
        let turn = self.turn.value
        // Drawn on the frame as shown, then moved onto the frame as stored.
        let (shownWidth, shownHeight) = turn.swapsSides ? (frame.height, frame.width) : (frame.width, frame.height)
        return cache.withLock { cache in
            let sameCanvas =
                cache.version == version && cache.width == frame.width && cache.height == frame.height
                && cache.pictures.count == overlays.count
            var changed = !sameCanvas
            if !sameCanvas { cache.pictures = Array(repeating: (nil, nil), count: overlays.count) }
            for (index, prepared) in overlays.enumerated() {
                var clock: String?
                if case .clock(let style, _) = prepared.overlay.content { clock = ClockText.text(style, at: now, runningTime: frame.runningTime) }
                if sameCanvas && cache.pictures[index].clock == clock { continue }
                let picture = OverlayRenderer.render(prepared, width: shownWidth, height: shownHeight, clockText: clock)
                cache.pictures[index] = (picture.map { turn.storing($0, shownWidth: shownWidth, shownHeight: shownHeight) }, clock)
                changed = true
            }
            if changed {
                cache.composition = OverlayComposition(cache.pictures.compactMap(\.picture))
                cache.version = version
                cache.width = frame.width
                cache.height = frame.height
            }
            return cache.composition
        }
    }
}

/// The text a clock overlay shows, formatted by the framework (never with a user's format string).
enum ClockText {
    static func text(_ style: CaptureOverlay.ClockStyle, at date: Date, runningTime: UInt64?) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        func three(_ value: Int) -> String { value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : "\(value)" }
        if style == .running {
            let nanoseconds = runningTime ?? 0
            let milliseconds = Int(nanoseconds / 1_000_000)
            let seconds = milliseconds / 1000
            return "\(seconds / 3600):\(two(seconds / 60 % 60)):\(two(seconds % 60)).\(three(milliseconds % 1000))"
        }
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        var local = tm()
        localtime_r(&seconds, &local)
        let time = "\(two(Int(local.tm_hour))):\(two(Int(local.tm_min))):\(two(Int(local.tm_sec)))"
        switch style {
        case .time: return time
        case .dateTime: return "\(Int(local.tm_year) + 1900)-\(two(Int(local.tm_mon) + 1))-\(two(Int(local.tm_mday))) \(time)"
        case .milliseconds: return time + "." + three(Int((interval - interval.rounded(.down)) * 1000) % 1000)
        case .running: return time
        }
    }
}
