import CGStreamer
import CGStreamerShim

/// The kinds of bus message the project reacts to.
public enum MessageKind: Sendable, Equatable {
    /// The message types, by their `GstMessageType`:
    /// - `eos`: end of stream (`GST_MESSAGE_EOS`).
    /// - `error`, `warning`, `info`: an element reports a problem or a notice; read it with `Message/error`.
    /// - `stateChanged`: an element changed state; read it with `Message/stateChange`.
    /// - `element`: an element-specific message, its payload in `Message/structure`.
    /// - `asyncDone`: an asynchronous state change (preroll) or flushing seek completed.
    /// - `qos`: an element dropped or late-rendered buffers; see `Message/qosDropped`.
    /// - `latency`: an element's latency changed and the pipeline should recalculate it.
    case eos, error, warning, info, stateChanged, element, asyncDone, qos, latency
    /// The message types, continued:
    /// - `deviceAdded`, `deviceRemoved`, `deviceChanged`: a device monitor's hot-plug messages; read the
    ///   device with `Message/device`.
    /// - `streamStart`: a new stream begins (`GST_MESSAGE_STREAM_START`).
    /// - `other(_:)`: any other type, with its raw `GstMessageType` value.
    case deviceAdded, deviceRemoved, deviceChanged, streamStart, other(UInt32)

    init(_ type: GstMessageType) {
        switch type {
        case GST_MESSAGE_EOS: self = .eos
        case GST_MESSAGE_ERROR: self = .error
        case GST_MESSAGE_WARNING: self = .warning
        case GST_MESSAGE_INFO: self = .info
        case GST_MESSAGE_STATE_CHANGED: self = .stateChanged
        case GST_MESSAGE_ELEMENT: self = .element
        case GST_MESSAGE_ASYNC_DONE: self = .asyncDone
        case GST_MESSAGE_QOS: self = .qos
        case GST_MESSAGE_LATENCY: self = .latency
        case GST_MESSAGE_DEVICE_ADDED: self = .deviceAdded
        case GST_MESSAGE_DEVICE_REMOVED: self = .deviceRemoved
        case GST_MESSAGE_DEVICE_CHANGED: self = .deviceChanged
        case GST_MESSAGE_STREAM_START: self = .streamStart
        default: self = .other(UInt32(bitPattern: Int32(type.rawValue)))
        }
    }
}

/// A GStreamer error or warning as posted on the bus.
public struct BusError: Error, Sendable, CustomStringConvertible {
    /// The GError domain, e.g. "gst-resource-error-quark".
    public let domain: String
    /// The GError code within `domain` (for the resource domain, compare with `resourceNotFound` ...).
    public let code: Int
    /// The GError's human-readable message.
    public let message: String
    /// The debug text the element added (source file, function and details), if any.
    public let debug: String?
    /// The name of the element that posted it.
    public let source: String
    /// The flow return that stopped a streaming thread, for the errors elements post when their
    /// stream stops (`GST_ELEMENT_FLOW_ERROR` adds it to the message's details): `flowNotNegotiated`
    /// when caps could not be agreed on.
    public var flowReturn: Int? = nil

    /// Makes an error from its parts, as `Message/error` does from a posted message.
    /// - Parameters:
    ///   - domain: The GError domain, e.g. "gst-resource-error-quark".
    ///   - code: The GError code within `domain`.
    ///   - message: The human-readable message.
    ///   - debug: The element's debug text, if any.
    ///   - source: The name of the element that posted it.
    ///   - flowReturn: The flow return that stopped the stream, if the message carries one.
    public init(domain: String, code: Int, message: String, debug: String?, source: String, flowReturn: Int? = nil) {
        self.domain = domain
        self.code = code
        self.message = message
        self.debug = debug
        self.source = source
        self.flowReturn = flowReturn
    }

    /// True when the error is in GStreamer's resource domain (a device or file that could not be
    /// opened, read or written ...).
    public var isResourceError: Bool { domain == "gst-resource-error-quark" }
    /// True when the error is in GStreamer's stream domain (decoding, format or negotiation problems ...).
    public var isStreamError: Bool { domain == "gst-stream-error-quark" }
    /// The posting element's name and the message: `source: message`.
    public var description: String { "\(source): \(message)" }

    /// The operating system's error behind it, when the debug text ends with one the way GStreamer's
    /// elements write it ("poll error 1: Input/output error (5)"): its number and text.
    public var systemError: (number: Int32, text: String)? {
        guard let debug else { return nil }
        let line = debug.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard line.hasSuffix(")"), let open = line.lastIndex(of: "("),
            let number = Int32(line[line.index(after: open)..<line.index(before: line.endIndex)])
        else { return nil }
        var text = line[..<open].trimmingCharacters(in: .whitespaces)
        if let colon = text.lastIndex(of: ":") { text = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces) }
        return text.isEmpty ? nil : (number, text)
    }

    // GstResourceError codes (stable ABI values).
    /// `GST_RESOURCE_ERROR_NOT_FOUND`: the resource (device, file) does not exist.
    public static let resourceNotFound = Int(GST_RESOURCE_ERROR_NOT_FOUND.rawValue)
    /// `GST_RESOURCE_ERROR_BUSY`: the resource is in use by someone else.
    public static let resourceBusy = Int(GST_RESOURCE_ERROR_BUSY.rawValue)
    /// `GST_RESOURCE_ERROR_OPEN_READ`: the resource could not be opened for reading.
    public static let resourceOpenRead = Int(GST_RESOURCE_ERROR_OPEN_READ.rawValue)
    /// `GST_RESOURCE_ERROR_OPEN_READ_WRITE`: the resource could not be opened for reading and writing.
    public static let resourceOpenReadWrite = Int(GST_RESOURCE_ERROR_OPEN_READ_WRITE.rawValue)
    /// `GST_RESOURCE_ERROR_READ`: reading from the resource failed.
    public static let resourceRead = Int(GST_RESOURCE_ERROR_READ.rawValue)
    /// `GST_RESOURCE_ERROR_WRITE`: writing to the resource failed.
    public static let resourceWrite = Int(GST_RESOURCE_ERROR_WRITE.rawValue)
    /// `GST_RESOURCE_ERROR_NO_SPACE_LEFT`: no space left on the resource (a full disk).
    public static let resourceNoSpaceLeft = Int(GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue)
    /// `GST_RESOURCE_ERROR_NOT_AUTHORIZED`: permission to use the resource was denied.
    public static let resourceNotAuthorized = Int(GST_RESOURCE_ERROR_NOT_AUTHORIZED.rawValue)
    /// `GST_RESOURCE_ERROR_SETTINGS`: the resource rejected the requested settings.
    public static let resourceSettings = Int(GST_RESOURCE_ERROR_SETTINGS.rawValue)
    /// The flow return of a stream that could not agree on caps.
    public static let flowNotNegotiated = Int(GST_FLOW_NOT_NEGOTIATED.rawValue)
}

/// An owned `GstMessage`. Messages are immutable once posted, so reading from any thread is safe.
public final class Message: @unchecked Sendable {
    // @unchecked: a posted message is immutable; only our own reference is released here.
    /// The underlying `GstMessage`, on which this object holds a reference.
    public let message: UnsafeMutablePointer<GstMessage>

    /// Takes a new reference on a borrowed message.
    public init(borrowing message: UnsafeMutablePointer<GstMessage>) {
        gst_mini_object_ref(UnsafeMutableRawPointer(message).assumingMemoryBound(to: GstMiniObject.self))
        self.message = message
    }

    deinit { gst_mini_object_unref(UnsafeMutableRawPointer(message).assumingMemoryBound(to: GstMiniObject.self)) }

    /// The message's type.
    public var kind: MessageKind { MessageKind(message.pointee.type) }

    /// The name of the object that posted the message.
    public var sourceName: String { borrowString(capture_message_src_name(message)) ?? "" }

    /// The posting object, when it is an element.
    public var sourceObject: UnsafeMutablePointer<GstObject>? { message.pointee.src }

    /// True when the posting object is `ancestor` or lies inside it (at any depth). Takes the objects'
    /// locks as it walks up, so it is safe while elements are added and removed. The corresponding C
    /// function is `gst_object_has_as_ancestor`.
    public func isPosted(within ancestor: GObjectRef) -> Bool {
        guard let source = message.pointee.src else { return false }
        return source == ancestor.pointer || gst_object_has_as_ancestor(source, ancestor.pointer) != 0
    }

    /// The message's structure, copied (element messages carry their payload here).
    public var structure: Structure? {
        gst_message_get_structure(message).map { Structure(copying: $0) }
    }

    /// For error and warning messages: the parsed GError and debug string.
    public var error: BusError? {
        var gerror: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        switch kind {
        case .error: gst_message_parse_error(message, &gerror, &debug)
        case .warning: gst_message_parse_warning(message, &gerror, &debug)
        default: return nil
        }
        guard let gerror else { return nil }
        defer { g_error_free(gerror) }
        var flowReturn: Int?
        if kind == .error {
            var details: UnsafePointer<GstStructure>?
            gst_message_parse_error_details(message, &details)
            var value: gint = 0
            if let details, gst_structure_get_enum(details, "flow-return", gst_flow_return_get_type(), &value) != 0 {
                flowReturn = Int(value)
            }
        }
        return BusError(
            domain: borrowString(g_quark_to_string(gerror.pointee.domain)) ?? "",
            code: Int(gerror.pointee.code),
            message: String(cString: gerror.pointee.message),
            debug: takeString(debug),
            source: sourceName,
            flowReturn: flowReturn)
    }

    /// For state-changed messages: (old, new, pending).
    public var stateChange: (old: ElementState, new: ElementState, pending: ElementState)? {
        guard kind == .stateChanged else { return nil }
        var old = GST_STATE_VOID_PENDING, new = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
        gst_message_parse_state_changed(message, &old, &new, &pending)
        return (ElementState(old), ElementState(new), ElementState(pending))
    }

    /// For device-added/removed/changed messages: the device.
    public var device: Device? {
        var device: UnsafeMutablePointer<GstDevice>?
        switch kind {
        case .deviceAdded: gst_message_parse_device_added(message, &device)
        case .deviceRemoved: gst_message_parse_device_removed(message, &device)
        case .deviceChanged: gst_message_parse_device_changed(message, &device, nil)
        default: return nil
        }
        return device.map { Device(full: UnsafeMutableRawPointer($0).assumingMemoryBound(to: GstObject.self)) }
    }

    /// For messages a bin with `message-forward` wrapped ("GstBinForwarded"): the inner message.
    public var forwarded: Message? {
        guard kind == .element, let structure = gst_message_get_structure(message),
            String(cString: gst_structure_get_name(structure)) == "GstBinForwarded",
            let value = gst_structure_get_value(structure, "message"),
            let inner = g_value_get_boxed(value)
        else { return nil }
        return Message(borrowing: UnsafeMutableRawPointer(inner).assumingMemoryBound(to: GstMessage.self))
    }

    /// For QoS messages: how many buffers were dropped so far by the posting element.
    public var qosDropped: UInt64? {
        guard kind == .qos else { return nil }
        var format = GST_FORMAT_UNDEFINED
        var processed: guint64 = 0, dropped: guint64 = 0
        gst_message_parse_qos_stats(message, &format, &processed, &dropped)
        return UInt64(dropped)
    }
}

/// The closure behind a bus sync handler.
private final class BusHandlerBox {
    let body: @Sendable (Message) -> Void
    init(_ body: @escaping @Sendable (Message) -> Void) { self.body = body }
}

/// Runs on whichever thread posts a message: no actor isolation here, the closure copies out and returns.
/// A sync handler that returns GST_BUS_DROP owns the message and must release it: the wrapper takes
/// over the bus's reference.
private let busTrampoline: GstBusSyncHandler = { _, message, userData in
    guard let message else { return GST_BUS_DROP }
    let wrapped = Message(borrowing: message)
    gst_mini_object_unref(UnsafeMutableRawPointer(message).assumingMemoryBound(to: GstMiniObject.self))
    if let userData {
        capture_tsan_acquire(userData)  // the box came through the bus's object lock (see setSyncHandler)
        Unmanaged<BusHandlerBox>.fromOpaque(userData).takeUnretainedValue().body(wrapped)
    }
    return GST_BUS_DROP
}

private let busDestroy: GDestroyNotify = { userData in
    guard let userData else { return }
    Unmanaged<BusHandlerBox>.fromOpaque(userData).release()
}

/// An owned `GstBus`.
public final class Bus: GObjectRef, @unchecked Sendable {
    // @unchecked: as GObjectRef; GstBus is made to be posted to and read from any thread.
    var bus: UnsafeMutablePointer<GstBus> { UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstBus.self) }

    /// Every message is handed to `body` synchronously on the posting thread, then dropped: no GLib main
    /// loop is needed. The closure must not block. The corresponding C function is
    /// `gst_bus_set_sync_handler`.
    public func setSyncHandler(_ body: @escaping @Sendable (Message) -> Void) {
        let box = Unmanaged.passRetained(BusHandlerBox(body)).toOpaque()
        // The bus stores the handler and a posting thread reads it under the bus's object lock, a GMutex
        // ThreadSanitizer cannot see; this and the trampoline's acquire show it the hand-off.
        capture_tsan_release(box)
        gst_bus_set_sync_handler(bus, busTrampoline, box, busDestroy)
    }

    /// Drops every queued message and refuses new ones (or accepts them again). A bus whose pipeline is
    /// going away must flush: queued messages hold references to the elements that posted them.
    /// The corresponding C function is `gst_bus_set_flushing`.
    public func setFlushing(_ flushing: Bool) {
        gst_bus_set_flushing(bus, flushing ? 1 : 0)
    }

    /// Removes the sync handler (releasing its closure).
    public func removeSyncHandler() {
        gst_bus_set_sync_handler(bus, nil, nil, nil)
    }
}
