import CGStreamer
import CGStreamerShim
import Foundation

/// An owned reference to a `GstObject` (element, pad, bus, device ...).
/// Thread safety: GstObject reference counting and property access are thread-safe in GStreamer,
/// which is what makes the `@unchecked Sendable` true.
public class GObjectRef: @unchecked Sendable, Hashable {
    /// The underlying `GstObject`, on which this object holds a reference.
    public let pointer: UnsafeMutablePointer<GstObject>

    /// Adopts a reference that is already ours (a "full" transfer, e.g. from `gst_bin_get_by_name`).
    public required init(full pointer: UnsafeMutablePointer<GstObject>) {
        self.pointer = pointer
    }

    /// Takes a new reference on a borrowed object.
    public convenience init(borrowing pointer: UnsafeMutablePointer<GstObject>) {
        gst_object_ref(UnsafeMutableRawPointer(pointer))
        self.init(full: pointer)
    }

    /// Adopts a reference from a constructor that may return it floating (e.g. `gst_element_factory_make`),
    /// sinking it when it is floating. Some constructors (`gst_device_monitor_new`) return a full
    /// reference instead; sinking that would add a reference nobody releases.
    /// The corresponding C function is `gst_object_ref_sink`.
    public convenience init(floating pointer: UnsafeMutablePointer<GstObject>) {
        if g_object_is_floating(UnsafeMutableRawPointer(pointer)) != 0 {
            gst_object_ref_sink(UnsafeMutableRawPointer(pointer))
        }
        self.init(full: pointer)
    }

    deinit {
        gst_object_unref(UnsafeMutableRawPointer(pointer))
    }

    /// The object as an untyped pointer, for the C shims and GLib functions that take a `gpointer`.
    public var raw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(pointer) }

    /// The object's name. The corresponding C function is `gst_object_get_name`.
    public var name: String {
        takeString(gst_object_get_name(pointer)) ?? ""
    }

    /// The GType name, e.g. "GstV4l2Src".
    public var typeName: String { String(cString: capture_object_type_name(raw)) }

    /// Sets a property from text, typed by the property's spec: a string property takes the text as
    /// it is (never unquoted or unescaped, so a file name stays the file name), any other property
    /// parses it as a value of its own type (number, boolean, enum nick, caps, fraction ...) and
    /// refuses what is not one. The corresponding C functions are `g_object_set_property` and
    /// `gst_value_deserialize_with_pspec`.
    public func set(_ property: String, _ value: String) throws(GStreamerError) {
        switch capture_object_set_property_from_string(raw, property, value) {
        case 1: return
        case 0: throw .noSuchProperty(element: name, property: property)
        default: throw .invalidPropertyValue(element: name, property: property, value: value)
        }
    }

    /// Sets a numeric property (double, float, or an integer type taking a whole number), through
    /// the property's own type like `set(_:_:)`.
    public func set(_ property: String, _ value: Double) throws(GStreamerError) {
        try set(property, value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.9g", value))
    }

    /// Sets an integer property (int, uint, int64, enum by value), through the property's own type.
    public func set(_ property: String, _ value: Int) throws(GStreamerError) {
        try set(property, String(value))
    }

    /// Sets an object-typed property to another object (camerabin's "camera-source", a source's
    /// "video-source" ...); the owner takes its own reference. The corresponding C function is
    /// `g_object_set`.
    public func set(_ property: String, object value: GObjectRef) throws(GStreamerError) {
        switch capture_object_set_object(raw, property, value.raw) {
        case 0: return
        case 1: throw .noSuchProperty(element: name, property: property)
        default: throw .propertyTypeMismatch(element: name, property: property, value: value.typeName)
        }
    }

    /// True when the object has a property of that name. The corresponding C function is
    /// `g_object_class_find_property`.
    public func hasProperty(_ property: String) -> Bool {
        capture_object_has_property(raw, property) != 0
    }

    /// A property's value in its serialized string form, or nil when there is no such property.
    public func string(_ property: String) -> String? {
        takeString(capture_object_get_property_string(raw, property))
    }

    /// An integer-like property (ints, enums, booleans), or nil.
    public func int(_ property: String) -> Int64? {
        var value: gint64 = 0
        return capture_object_get_property_int64(raw, property, &value) != 0 ? Int64(value) : nil
    }

    /// Emits an action signal without arguments (e.g. camerabin's "start-capture").
    public func emit(_ signal: String) {
        capture_emit_action_signal(raw, signal)
    }

    /// True when both wrap the same `GstObject`.
    public static func == (lhs: GObjectRef, rhs: GObjectRef) -> Bool { lhs.pointer == rhs.pointer }
    /// Hashes the wrapped object's address.
    public func hash(into hasher: inout Hasher) { hasher.combine(pointer) }
}
