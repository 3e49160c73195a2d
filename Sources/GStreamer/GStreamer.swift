import CGStreamer
import CGStreamerShim
import Synchronization

/// Process-wide GStreamer set-up.
public enum GStreamer {
    private static let initResult: Result<Void, GStreamerError> = {
        var error: UnsafeMutablePointer<GError>?
        if gst_init_check(nil, nil, &error) == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown reason"
            if let error { g_error_free(error) }
            return .failure(.initializationFailed(message))
        }
        return .success(())
    }()

    /// Initialises GStreamer once per process. Safe to call from any thread, any number of times.
    /// The corresponding C function is `gst_init_check`.
    public static func initialize() throws(GStreamerError) {
        try initResult.get()
    }

    /// Releases GStreamer's global resources at process end. Only for leak checking (the leaks tracer
    /// reports at this point): no GStreamer call may follow. The corresponding C function is `gst_deinit`.
    public static func deinitialize() {
        if case .success = initResult { gst_deinit() }
    }

    /// The version of the GStreamer library in use, e.g. "1.22.0".
    public static var version: String {
        var major: guint = 0, minor: guint = 0, micro: guint = 0, nano: guint = 0
        gst_version(&major, &minor, &micro, &nano)
        return "\(major).\(minor).\(micro)"
    }

    /// True when an element factory of that name is installed.
    /// The corresponding C function is `gst_element_factory_find`.
    public static func hasElement(_ factory: String) -> Bool {
        guard let found = gst_element_factory_find(factory) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(found))
        return true
    }

    /// The pipeline clock's notion of "now" is not needed here; this is the monotonic system clock
    /// GStreamer uses, in nanoseconds.
    public static var monotonicNanoseconds: UInt64 {
        UInt64(g_get_monotonic_time()) * 1000
    }
}

/// Errors of the GStreamer layer. Each names the element, pad or description it is about.
public enum GStreamerError: Error, Equatable, CustomStringConvertible, Sendable {
    /// GStreamer itself could not be initialised (`gst_init_check` failed); carries its message.
    case initializationFailed(String)
    /// No element factory of that name is installed.
    case elementNotFound(factory: String)
    /// A gst-launch description could not be built; carries the description and the parser's message.
    case parseFailed(description: String, message: String)
    /// Two elements or pads could not be linked; carries their names and why.
    case linkFailed(from: String, to: String, reason: String)
    /// An element refused a state change; carries its name and the requested state.
    case stateChangeFailed(element: String, state: String)
    /// An element has no pad of that name, or cannot give one from that template.
    case noSuchPad(element: String, pad: String)
    /// An element has no property of that name.
    case noSuchProperty(element: String, property: String)
    /// A value that is not of the property's type (a word for a number, an unknown enum nick ...).
    case invalidPropertyValue(element: String, property: String, value: String)
    /// An object-typed property was given an object of another type; `value` is the given object's type name.
    case propertyTypeMismatch(element: String, property: String, value: String)
    /// A caps description GStreamer could not parse; carries the description.
    case invalidCaps(String)
    /// A sample could not be converted (`gst_video_convert_sample`).
    case conversionFailed(caps: String, message: String)
    /// A webrtcbin negotiation step failed (an offer, a description, a promise with no answer).
    case webRTCFailed(element: String, message: String)

    /// A sentence saying what failed, naming the element, pad or description.
    public var description: String {
        switch self {
        case .initializationFailed(let message):
            return "GStreamer could not be initialised: \(message)"
        case .elementNotFound(let factory):
            return "the GStreamer element '\(factory)' is not installed (gst-inspect-1.0 \(factory) says which plugin provides it)"
        case .parseFailed(let description, let message):
            return "GStreamer could not build '\(description)': \(message)"
        case .linkFailed(let from, let to, let reason):
            return "could not link \(from) to \(to): \(reason)"
        case .stateChangeFailed(let element, let state):
            return "\(element) refused to change state to \(state)"
        case .noSuchPad(let element, let pad):
            return "\(element) has no pad '\(pad)'"
        case .noSuchProperty(let element, let property):
            return "\(element) has no property '\(property)'"
        case .invalidPropertyValue(let element, let property, let value):
            return "\(element): '\(value)' is not a value of its property '\(property)'"
        case .propertyTypeMismatch(let element, let property, let value):
            return "the property '\(property)' of \(element) does not take a \(value)"
        case .invalidCaps(let caps):
            return "'\(caps)' is not a valid GStreamer caps description"
        case .conversionFailed(let caps, let message):
            return "could not convert a frame to \(caps): \(message)"
        case .webRTCFailed(let element, let message):
            return "\(element): \(message)"
        }
    }
}

/// Takes ownership of a g_malloc'ed C string.
func takeString(_ pointer: UnsafeMutablePointer<gchar>?) -> String? {
    guard let pointer else { return nil }
    defer { g_free(pointer) }
    return String(cString: pointer)
}

/// Reads a borrowed C string.
func borrowString(_ pointer: UnsafePointer<gchar>?) -> String? {
    pointer.map { String(cString: $0) }
}
