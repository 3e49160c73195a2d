import CGStreamer
import CGStreamerShim

/// The states of a GStreamer element.
public enum ElementState: Int, Sendable, CustomStringConvertible {
    /// The states, by their `GstState` value:
    /// - `voidPending`: no state pending (`GST_STATE_VOID_PENDING`); also what an unknown value reads as.
    /// - `null`: the initial state; no resources are held.
    /// - `ready`: resources are allocated (a device opened), no data flows.
    /// - `paused`: data is prerolled and the pipeline is ready to play; the clock does not run.
    /// - `playing`: data flows and the clock runs.
    case voidPending = 0, null = 1, ready = 2, paused = 3, playing = 4

    init(_ state: GstState) { self = ElementState(rawValue: Int(state.rawValue)) ?? .voidPending }
    var gst: GstState { GstState(UInt32(rawValue)) }
    /// The state's GStreamer name (`NULL`, `READY`, `PAUSED`, `PLAYING`, `VOID_PENDING`).
    public var description: String {
        switch self {
        case .voidPending: "VOID_PENDING"
        case .null: "NULL"
        case .ready: "READY"
        case .paused: "PAUSED"
        case .playing: "PLAYING"
        }
    }
}

/// The result of a state change request that did not fail.
public enum StateChangeResult: Sendable {
    /// The outcomes, by their `GstStateChangeReturn`:
    /// - `success`: the element is in the requested state.
    /// - `async`: the change completes later, announced by an async-done message.
    /// - `noPreroll`: the change succeeded, but the element cannot produce data in `paused` (a live source).
    case success, async, noPreroll
}

/// An owned `GstElement`.
public class Element: GObjectRef, @unchecked Sendable {
    // @unchecked: as GObjectRef (GstObject references and properties are thread-safe); no Swift state.
    /// The underlying `GstElement`.
    public var element: UnsafeMutablePointer<GstElement> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstElement.self)
    }

    /// Makes an element from its factory name. The corresponding C function is `gst_element_factory_make`.
    public static func make(_ factory: String, name: String? = nil) throws(GStreamerError) -> Element {
        try GStreamer.initialize()
        guard let made = gst_element_factory_make(factory, name) else {
            throw .elementNotFound(factory: factory)
        }
        return Element(floating: UnsafeMutableRawPointer(made).assumingMemoryBound(to: GstObject.self))
    }

    /// Wraps a borrowed element pointer with a new reference, as the most specific wrapper.
    public static func borrow(_ raw: UnsafeMutablePointer<GstElement>) -> Element {
        let object = UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstObject.self)
        if capture_object_is_bin(raw) != 0 { return Bin(borrowing: object) }
        return Element(borrowing: object)
    }

    /// The factory's name ("v4l2src"), or nil for elements made without a factory.
    public var factoryName: String? {
        guard let factory = gst_element_get_factory(element) else { return nil }
        return takeString(gst_object_get_name(UnsafeMutableRawPointer(factory).assumingMemoryBound(to: GstObject.self)))
    }

    /// The factory klass, e.g. "Source/Video".
    public var klass: String? { borrowString(capture_element_klass(element)) }

    /// Requests a state change. The corresponding C function is `gst_element_set_state`.
    @discardableResult
    public func setState(_ state: ElementState) throws(GStreamerError) -> StateChangeResult {
        let result = gst_element_set_state(element, state.gst)
        switch result {
        case GST_STATE_CHANGE_FAILURE: throw .stateChangeFailed(element: name, state: state.description)
        case GST_STATE_CHANGE_ASYNC: return .async
        case GST_STATE_CHANGE_NO_PREROLL: return .noPreroll
        default: return .success
        }
    }

    /// The current state without waiting. The corresponding C function is `gst_element_get_state`
    /// with a zero timeout.
    public var currentState: ElementState {
        var current = GST_STATE_VOID_PENDING
        var pending = GST_STATE_VOID_PENDING
        _ = gst_element_get_state(element, &current, &pending, 0)
        return ElementState(current)
    }

    /// Brings the element to its parent's state. The corresponding C function is
    /// `gst_element_sync_state_with_parent`.
    public func syncStateWithParent() throws(GStreamerError) {
        if gst_element_sync_state_with_parent(element) == 0 {
            throw .stateChangeFailed(element: name, state: "the parent's state")
        }
    }

    /// Locks the element's state so that the parent's state changes leave it alone.
    public func setLockedState(_ locked: Bool) {
        gst_element_set_locked_state(element, locked ? 1 : 0)
    }

    /// A pad the element always has ("src", "sink"), or nil when it has none of that name. The corresponding C
    /// function is `gst_element_get_static_pad`.
    public func staticPad(_ name: String) -> Pad? {
        gst_element_get_static_pad(element, name).map { Pad(full: UnsafeMutableRawPointer($0).assumingMemoryBound(to: GstObject.self)) }
    }

    /// Requests a pad from a template such as "src_%u". The corresponding C function is
    /// `gst_element_request_pad_simple`.
    public func requestPad(_ template: String) throws(GStreamerError) -> Pad {
        guard let pad = gst_element_request_pad_simple(element, template) else {
            throw .noSuchPad(element: name, pad: template)
        }
        return Pad(full: UnsafeMutableRawPointer(pad).assumingMemoryBound(to: GstObject.self))
    }

    /// Gives a request pad back. The corresponding C function is `gst_element_release_request_pad`.
    public func releaseRequestPad(_ pad: Pad) {
        gst_element_release_request_pad(element, pad.pad)
    }

    /// Links this element to another, picking compatible pads. The corresponding C function is
    /// `gst_element_link`.
    public func link(to other: Element) throws(GStreamerError) {
        if gst_element_link(element, other.element) == 0 {
            throw .linkFailed(from: name, to: other.name, reason: "no compatible pads")
        }
    }

    /// Sends an event into the element. Takes ownership of the event.
    @discardableResult
    public func sendEvent(_ event: UnsafeMutablePointer<GstEvent>) -> Bool {
        gst_element_send_event(element, event) != 0
    }

    /// Sends EOS into the element (for a pipeline: into every source). The corresponding C function is
    /// `gst_element_send_event` with `gst_event_new_eos`.
    @discardableResult
    public func sendEOS() -> Bool {
        gst_element_send_event(element, gst_event_new_eos()) != 0
    }

    /// The element's base time: the clock time at which its running time was zero. The corresponding C function
    /// is `gst_element_get_base_time`.
    public var baseTime: UInt64 { UInt64(gst_element_get_base_time(element)) }

    /// The running time now on the element's clock, or nil without a clock.
    public var runningTime: UInt64? {
        guard let clock = gst_element_get_clock(element) else { return nil }
        defer { gst_object_unref(clock) }
        let now = UInt64(gst_clock_get_time(clock))
        let base = baseTime
        return now >= base ? now - base : 0
    }
}

/// An owned `GstBin`.
public class Bin: Element, @unchecked Sendable {
    // @unchecked: as Element; GstBin's children list is guarded by the object lock in C.
    /// The underlying `GstBin`.
    public var bin: UnsafeMutablePointer<GstBin> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstBin.self)
    }

    /// Makes an empty bin. The corresponding C function is `gst_bin_new`.
    /// - Parameter name: The bin's name.
    /// - Throws: `GStreamerError.initializationFailed` when GStreamer cannot be initialised.
    public static func empty(name: String) throws(GStreamerError) -> Bin {
        try GStreamer.initialize()
        return Bin(floating: UnsafeMutableRawPointer(gst_bin_new(name)).assumingMemoryBound(to: GstObject.self))
    }

    /// Builds a bin from a gst-launch description. `gst_parse_bin_from_description` can return a partial
    /// bin AND an error: the error is treated as failure.
    public static func parse(_ description: String, name: String, ghostUnlinkedPads: Bool = false) throws(GStreamerError) -> Bin {
        try GStreamer.initialize()
        var error: UnsafeMutablePointer<GError>?
        let made = gst_parse_bin_from_description_full(description, ghostUnlinkedPads ? 1 : 0, nil, GST_PARSE_FLAG_FATAL_ERRORS, &error)
        if let error {
            let message = String(cString: error.pointee.message)
            g_error_free(error)
            if let made { gst_object_unref(UnsafeMutableRawPointer(made)) }
            throw .parseFailed(description: description, message: message)
        }
        guard let made else { throw .parseFailed(description: description, message: "no element was made") }
        let bin = Bin(floating: UnsafeMutableRawPointer(made).assumingMemoryBound(to: GstObject.self))
        gst_object_set_name(bin.pointer, name)
        return bin
    }

    /// Adds an element; the bin takes its own reference. The corresponding C function is `gst_bin_add`.
    public func add(_ child: Element) throws(GStreamerError) {
        if gst_bin_add(bin, child.element) == 0 {
            throw .linkFailed(from: child.name, to: name, reason: "the bin refused the element (duplicate name?)")
        }
    }

    /// Removes an element. The corresponding C function is `gst_bin_remove`.
    public func remove(_ child: Element) {
        _ = gst_bin_remove(bin, child.element)
    }

    /// Finds a child by name, recursing into child bins. The corresponding C function is
    /// `gst_bin_get_by_name`.
    public func child(named name: String) -> Element? {
        gst_bin_get_by_name(bin, name).map { raw in
            let object = UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstObject.self)
            return capture_object_is_bin(raw) != 0 ? Bin(full: object) : Element(full: object)
        }
    }

    /// Adds a ghost pad exposing a pad of a child. The corresponding C function is `gst_ghost_pad_new`.
    @discardableResult
    public func addGhostPad(name: String, target: Pad) throws(GStreamerError) -> Pad {
        guard let ghost = gst_ghost_pad_new(name, target.pad) else {
            throw .noSuchPad(element: self.name, pad: name)
        }
        _ = gst_pad_set_active(ghost, 1)
        let pad = Pad(borrowing: UnsafeMutableRawPointer(ghost).assumingMemoryBound(to: GstObject.self))
        if gst_element_add_pad(element, ghost) == 0 {
            throw .noSuchPad(element: self.name, pad: name)
        }
        return pad
    }

    /// Every element inside, recursively. The corresponding C function is `gst_bin_iterate_recurse`.
    public var allElements: [Element] {
        var found: [Element] = []
        let iterator = gst_bin_iterate_recurse(bin)
        defer { gst_iterator_free(iterator) }
        var value = GValue()
        while gst_iterator_next(iterator, &value) == GST_ITERATOR_OK {
            if let object = g_value_get_object(&value) {
                found.append(Element.borrow(object.assumingMemoryBound(to: GstElement.self)))
            }
            g_value_unset(&value)
        }
        return found
    }

    /// All elements inside, recursively, as factory names (for checks and diagnostics).
    public var elementFactoryNames: [String] { allElements.compactMap(\.factoryName) }

    /// The elements inside made by `factory`, recursively (to tune an element a bin made for itself,
    /// such as the encoder of camerabin's encodebin).
    public func elements(madeBy factory: String) -> [Element] { allElements.filter { $0.factoryName == factory } }

    /// Writes the graph in graphviz dot form. The corresponding C function is
    /// `gst_debug_bin_to_dot_data`.
    public func dot() -> String {
        takeString(gst_debug_bin_to_dot_data(bin, GST_DEBUG_GRAPH_SHOW_ALL)) ?? ""
    }
}

/// An owned `GstPipeline`.
public final class Pipeline: Bin, @unchecked Sendable {
    // @unchecked: as Bin.
    /// Makes an empty pipeline. The corresponding C function is `gst_pipeline_new`.
    /// - Parameter name: The pipeline's name.
    /// - Throws: `GStreamerError.initializationFailed` when GStreamer cannot be initialised.
    public static func make(name: String) throws(GStreamerError) -> Pipeline {
        try GStreamer.initialize()
        return Pipeline(floating: UnsafeMutableRawPointer(gst_pipeline_new(name)).assumingMemoryBound(to: GstObject.self))
    }

    /// Makes the pipeline run on GStreamer's system clock (monotonic) whatever clock its elements
    /// provide. The corresponding C function is `gst_pipeline_use_clock`.
    public func useSystemClock() {
        let clock = gst_system_clock_obtain()
        gst_pipeline_use_clock(UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstPipeline.self), clock)
        if let clock { gst_object_unref(clock) }
    }

    /// The pipeline's bus. The corresponding C function is `gst_element_get_bus`.
    public var bus: Bus {
        Bus(full: UnsafeMutableRawPointer(gst_element_get_bus(element)).assumingMemoryBound(to: GstObject.self))
    }
}

private final class PadAddedBox {
    let body: @Sendable (Pad) -> Void
    init(_ body: @escaping @Sendable (Pad) -> Void) { self.body = body }
}

/// Runs on the thread that added the pad (a streaming thread for decoders).
private let padAddedTrampoline: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?) -> Void = { _, pad, userData in
    guard let pad, let userData else { return }
    let object = UnsafeMutableRawPointer(pad).assumingMemoryBound(to: GstObject.self)
    capture_tsan_acquire(userData)  // the box came through GSignal's lock (see onPadAdded)
    Unmanaged<PadAddedBox>.fromOpaque(userData).takeUnretainedValue().body(Pad(borrowing: object))
}

private let padAddedDestroy: GClosureNotify = { userData, _ in
    guard let userData else { return }
    Unmanaged<PadAddedBox>.fromOpaque(userData).release()
}

extension Element {
    /// Calls `body` for each pad the element adds later ("sometimes" pads: a decoder's outputs). The
    /// closure runs on the thread that adds the pad and must not block; it is released with the
    /// element. The corresponding C function is `g_signal_connect_data` on "pad-added".
    public func onPadAdded(_ body: @escaping @Sendable (Pad) -> Void) {
        let box = Unmanaged.passRetained(PadAddedBox(body)).toOpaque()
        // GSignal keeps the handler and an emitting thread finds it under GSignal's lock, a GMutex
        // ThreadSanitizer cannot see; this and the trampoline's acquire show it the hand-off.
        capture_tsan_release(box)
        let callback = unsafeBitCast(padAddedTrampoline, to: GCallback.self)
        g_signal_connect_data(raw, "pad-added", callback, box, padAddedDestroy, GConnectFlags(rawValue: 0))
    }

    /// True when the element has a "sometimes" source pad template (its outputs appear while it runs).
    public var hasSometimesSourcePads: Bool {
        guard let factory = gst_element_get_factory(element) else { return false }
        var templates = gst_element_factory_get_static_pad_templates(factory)
        while let node = templates {
            if let template = node.pointee.data?.assumingMemoryBound(to: GstStaticPadTemplate.self),
                template.pointee.direction == GST_PAD_SRC, template.pointee.presence == GST_PAD_SOMETIMES
            {
                return true
            }
            templates = node.pointee.next.map { UnsafePointer($0) }
        }
        return false
    }
}
