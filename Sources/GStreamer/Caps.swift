import CGStreamer

/// An owned `GstCaps`.
public final class Caps: @unchecked Sendable, CustomStringConvertible {
    // Caps are immutable once shared; only our own reference is ever released here.
    /// The underlying `GstCaps`, on which this object holds a reference.
    public let caps: UnsafeMutablePointer<GstCaps>

    /// Takes over a reference the caller owns; it is released when this object goes away.
    public init(owning caps: UnsafeMutablePointer<GstCaps>) { self.caps = caps }

    /// Parses a caps description ("video/x-raw,width=640"). The corresponding C function is
    /// `gst_caps_from_string`.
    public init(_ string: String) throws(GStreamerError) {
        try GStreamer.initialize()
        guard let caps = gst_caps_from_string(string) else { throw .invalidCaps(string) }
        self.caps = caps
    }

    deinit { gst_mini_object_unref(UnsafeMutableRawPointer(caps).assumingMemoryBound(to: GstMiniObject.self)) }

    /// The number of structures in the caps. The corresponding C function is `gst_caps_get_size`.
    public var count: Int { Int(gst_caps_get_size(caps)) }
    /// True for ANY caps, which match every format. The corresponding C function is `gst_caps_is_any`.
    public var isAny: Bool { gst_caps_is_any(caps) != 0 }

    /// The structures, copied out.
    public var structures: [Structure] {
        (0..<count).compactMap { index in
            gst_caps_get_structure(caps, guint(index)).map { Structure(copying: $0) }
        }
    }

    /// The caps serialized (`video/x-raw, format=(string)I420, ...`). The corresponding C function is
    /// `gst_caps_to_string`.
    public var description: String { takeString(gst_caps_to_string(caps)) ?? "" }
}

/// An owned copy of a `GstStructure`.
public final class Structure: @unchecked Sendable, CustomStringConvertible {
    // Our own copy: never shared with GStreamer, so reads from any thread are safe.
    let structure: UnsafeMutablePointer<GstStructure>

    /// Copies a structure GStreamer owns. The corresponding C function is `gst_structure_copy`.
    public init(copying structure: UnsafePointer<GstStructure>) {
        self.structure = gst_structure_copy(structure)
    }

    init(owning structure: UnsafeMutablePointer<GstStructure>) { self.structure = structure }

    /// Parses a serialized structure (`name, key=value, ...`). Returns nil when GStreamer's parser
    /// rejects it. The corresponding C function is `gst_structure_from_string`.
    public static func parse(_ text: String) -> (structure: Structure, consumed: Int)? {
        guard (try? GStreamer.initialize()) != nil else { return nil }
        return text.withCString { base -> (Structure, Int)? in
            var end: UnsafeMutablePointer<gchar>?
            guard let parsed = gst_structure_from_string(base, &end) else { return nil }
            let consumed = end.map { UnsafePointer($0) - base } ?? 0
            return (Structure(owning: parsed), consumed)
        }
    }

    deinit { gst_structure_free(structure) }

    /// The structure's name (`video/x-raw`, `GstBinForwarded` ...). The corresponding C function is
    /// `gst_structure_get_name`.
    public var name: String { String(cString: gst_structure_get_name(structure)) }

    /// The names of the structure's fields, in order.
    public var fieldNames: [String] {
        (0..<Int(gst_structure_n_fields(structure))).map { String(cString: gst_structure_nth_field_name(structure, guint($0))) }
    }

    /// True when the structure has a field of that name. The corresponding C function is
    /// `gst_structure_has_field`.
    public func has(_ field: String) -> Bool { gst_structure_has_field(structure, field) != 0 }

    /// A field's value as an integer; nil when it is missing or not a `gint`. The corresponding C function is
    /// `gst_structure_get_int`.
    public func int(_ field: String) -> Int? {
        var value: gint = 0
        return gst_structure_get_int(structure, field, &value) != 0 ? Int(value) : nil
    }

    /// A field's value as an unsigned 64-bit integer; nil when it is missing or not a `guint64`. The
    /// corresponding C function is `gst_structure_get_uint64`.
    public func uint64(_ field: String) -> UInt64? {
        var value: guint64 = 0
        return gst_structure_get_uint64(structure, field, &value) != 0 ? UInt64(value) : nil
    }

    /// A field's value as a string; nil when it is missing or not a string. The corresponding C function is
    /// `gst_structure_get_string`.
    public func string(_ field: String) -> String? {
        borrowString(gst_structure_get_string(structure, field))
    }

    /// A field's value as a Boolean; nil when it is missing or not a `gboolean`. The corresponding C function
    /// is `gst_structure_get_boolean`.
    public func bool(_ field: String) -> Bool? {
        var value: gboolean = 0
        return gst_structure_get_boolean(structure, field, &value) != 0 ? value != 0 : nil
    }

    /// A field's value as a double; nil when it is missing or not a `gdouble`. The corresponding C function is
    /// `gst_structure_get_double`.
    public func double(_ field: String) -> Double? {
        var value: gdouble = 0
        return gst_structure_get_double(structure, field, &value) != 0 ? value : nil
    }

    /// A fraction field's numerator and denominator (a frame rate, `30/1`); nil when it is missing or not a
    /// fraction. The corresponding C function is `gst_structure_get_fraction`.
    public func fraction(_ field: String) -> (Int, Int)? {
        var numerator: gint = 0, denominator: gint = 0
        return gst_structure_get_fraction(structure, field, &numerator, &denominator) != 0 ? (Int(numerator), Int(denominator)) : nil
    }

    /// The GType name of a field's value ("gint", "gchararray", "GstValueList", "GstFractionRange" ...).
    public func typeName(_ field: String) -> String? {
        let type = gst_structure_get_field_type(structure, field)
        guard type != 0 else { return nil }
        return borrowString(g_type_name(type))
    }

    /// A field's value serialized ("640", "{ 1, 2 }", "[ 1, 30 ]", "\"text\"" ...).
    public func serialized(_ field: String) -> String? {
        guard let value = gst_structure_get_value(structure, field) else { return nil }
        return takeString(gst_value_serialize(value))
    }

    /// The values of a list, array or range field, each serialized; a plain field gives one value.
    public func elements(_ field: String) -> [String] {
        guard let value = gst_structure_get_value(structure, field) else { return [] }
        let type = typeName(field) ?? ""
        if type == "GstValueList" {
            let size = gst_value_list_get_size(value)
            return (0..<size).compactMap { takeString(gst_value_serialize(gst_value_list_get_value(value, $0))) }
        }
        if type == "GstValueArray" {
            let count = gst_value_array_get_size(value)
            return (0..<count).compactMap { takeString(gst_value_serialize(gst_value_array_get_value(value, $0))) }
        }
        return [takeString(gst_value_serialize(value))].compactMap { $0 }
    }

    /// Integer range bounds of an int range field.
    public func intRange(_ field: String) -> ClosedRange<Int>? {
        guard let value = gst_structure_get_value(structure, field), typeName(field) == "GstIntRange" else { return nil }
        return Int(gst_value_get_int_range_min(value))...Int(gst_value_get_int_range_max(value))
    }

    /// Fraction range bounds, as doubles.
    public func fractionRange(_ field: String) -> ClosedRange<Double>? {
        guard let value = gst_structure_get_value(structure, field), typeName(field) == "GstFractionRange",
            let low = gst_value_get_fraction_range_min(value), let high = gst_value_get_fraction_range_max(value)
        else { return nil }
        func number(_ fraction: UnsafePointer<GValue>) -> Double {
            let denominator = gst_value_get_fraction_denominator(fraction)
            return denominator == 0 ? 0 : Double(gst_value_get_fraction_numerator(fraction)) / Double(denominator)
        }
        return number(low)...number(high)
    }

    /// The structure serialized (`name, key=(type)value, ...`), or its name if that fails. The corresponding C
    /// function is `gst_structure_to_string`.
    public var description: String { takeString(gst_structure_to_string(structure)) ?? name }
}
