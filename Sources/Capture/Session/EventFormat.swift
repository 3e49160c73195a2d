import Foundation

/// How events are printed: `capture run` and `capture stream` on their output, the MQTT publisher on
/// its topics. The same JSON line everywhere (docs/pipeline-format.md, "Events").
public enum EventFormat {
    /// `{"event": "session-started", "time": 0.125, ...}` on one line.
    public static func json(name: String, time: Double, fields: [(String, EventValue)]) -> String {
        var parts = ["\"event\": \(EventValue.string(name).json)", "\"time\": \(String(format: "%.3f", time))"]
        for (key, value) in fields where key != "event" && key != "time" {
            parts.append("\(EventValue.string(key).json): \(value.json)")
        }
        return "{" + parts.joined(separator: ", ") + "}"
    }

    /// `   0.125  session-started` then `key=value` pairs (values with spaces are quoted).
    public static func readable(name: String, time: Double, fields: [(String, EventValue)]) -> String {
        var line = String(format: "%8.3f  ", time) + name
        for (key, value) in fields {
            let text = value.description
            // A value with a control character (a newline a user put in a name) is quoted and escaped,
            // so it can never start a line of its own that looks like an event.
            let needsQuotes = text.isEmpty || text.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.value < 0x20 || $0.value == 0x7f }
            line += " \(key)=" + (needsQuotes ? EventValue.string(text).json : text)
        }
        return line
    }

    /// A session event as a JSON line, timed from `start`.
    public static func json(_ event: SessionEvent, since start: ContinuousClock.Instant) -> String {
        json(name: event.name, time: seconds(from: start, to: event.instant), fields: event.fields)
    }

    /// A session event as a readable line, timed from `start`.
    public static func readable(_ event: SessionEvent, since start: ContinuousClock.Instant) -> String {
        readable(name: event.name, time: seconds(from: start, to: event.instant), fields: event.fields)
    }

    /// Seconds from `start` to `instant`; 0 for an instant before it.
    public static func seconds(from start: ContinuousClock.Instant, to instant: ContinuousClock.Instant) -> Double {
        max(0, (instant - start).seconds)
    }
}
