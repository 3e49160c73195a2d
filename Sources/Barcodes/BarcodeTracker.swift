/// Turns per-frame reads into appearances: a code is reported when it comes into view, not again
/// while it stays, and again after it has been gone.
///
/// A code is gone once it was missed in `disappearanceFrames` decoded frames in a row AND for at
/// least `disappearanceInterval` seconds of frame time: one blurred or dropped frame does not make a
/// code leave and come back.
package struct BarcodeTracker: Sendable {
    struct Key: Hashable, Sendable {
        var type: MetadataObjectType
        var value: String
    }
    private struct Presence: Sendable {
        var object: MetadataMachineReadableCodeObject
        var lastSeen: Double
        var missed: Int
    }

    package var disappearanceInterval: Double
    package var disappearanceFrames: Int
    private var present: [Key: Presence] = [:]
    /// Keys in order of arrival, so that departures are reported in a stable order.
    private var order: [Key] = []

    package init(disappearanceInterval: Double, disappearanceFrames: Int) {
        self.disappearanceInterval = disappearanceInterval
        self.disappearanceFrames = disappearanceFrames
    }

    /// The codes in view now.
    package var visible: [MetadataMachineReadableCodeObject] { order.compactMap { present[$0]?.object } }

    /// Takes the reads of one decoded frame; returns the codes that just appeared and those that left.
    package mutating func update(
        _ reads: [MetadataMachineReadableCodeObject], timestamp: Double
    ) -> (appeared: [MetadataMachineReadableCodeObject], gone: [MetadataMachineReadableCodeObject]) {
        var appeared: [MetadataMachineReadableCodeObject] = []
        var seen = Set<Key>()
        for read in reads {
            let key = Key(type: read.type, value: read.stringValue)
            guard seen.insert(key).inserted else { continue }
            if present[key] != nil {
                present[key]?.lastSeen = timestamp
                present[key]?.missed = 0
            } else {
                present[key] = Presence(object: read, lastSeen: timestamp, missed: 0)
                order.append(key)
                appeared.append(read)
            }
        }
        var gone: [MetadataMachineReadableCodeObject] = []
        for key in order where !seen.contains(key) {
            guard var presence = present[key] else { continue }
            presence.missed += 1
            // Time going backwards (a replayed file that started over) counts frames only.
            let away = timestamp >= presence.lastSeen ? timestamp - presence.lastSeen : .infinity
            if presence.missed >= disappearanceFrames && away >= disappearanceInterval {
                present[key] = nil
                gone.append(presence.object)
            } else {
                present[key] = presence
            }
        }
        order.removeAll { present[$0] == nil }
        return (appeared, gone)
    }

    /// Forgets every code (the stream restarted); returns those that were in view.
    package mutating func reset() -> [MetadataMachineReadableCodeObject] {
        defer { present.removeAll(); order.removeAll() }
        return visible
    }
}
