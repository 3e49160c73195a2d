import Foundation

/// A point in pixels of a grey image (x right, y down).
package struct PixelPoint: Hashable, Sendable {
    package var x: Double
    package var y: Double
    package init(x: Double, y: Double) { self.x = x; self.y = y }

    package static func + (a: PixelPoint, b: PixelPoint) -> PixelPoint { PixelPoint(x: a.x + b.x, y: a.y + b.y) }
    package static func - (a: PixelPoint, b: PixelPoint) -> PixelPoint { PixelPoint(x: a.x - b.x, y: a.y - b.y) }
    package static func * (a: PixelPoint, k: Double) -> PixelPoint { PixelPoint(x: a.x * k, y: a.y * k) }
    package func dot(_ other: PixelPoint) -> Double { x * other.x + y * other.y }
    package func cross(_ other: PixelPoint) -> Double { x * other.y - y * other.x }
    package var length: Double { (x * x + y * y).squareRoot() }
    package var normalized: PixelPoint { let l = length; return l > 0 ? self * (1 / l) : self }
    /// Turned by 90 degrees clockwise on screen (y down): (1, 0) becomes (0, 1).
    package var perpendicular: PixelPoint { PixelPoint(x: -y, y: x) }
    package static func mid(_ a: PixelPoint, _ b: PixelPoint) -> PixelPoint { (a + b) * 0.5 }
}

/// Plane geometry for code positions: containment, and where a linear code ends along its scan line
/// and along its bars.
enum BarcodeGeometry {
    /// True when `point` is inside the convex quadrilateral (any winding).
    static func contains(_ quad: [PixelPoint], _ point: PixelPoint) -> Bool {
        var sign = 0.0
        for index in quad.indices {
            let cross = (quad[(index + 1) % quad.count] - quad[index]).cross(point - quad[index])
            if abs(cross) < 1e-9 { continue }
            if sign == 0 { sign = cross } else if (sign > 0) != (cross > 0) { return false }
        }
        return true
    }

    // MARK: The extent of a linear code

    /// The ends of a linear code on one scan line (a row when `horizontal`, else a column) through
    /// `point`, a point on or next to its bars: the runs of dark and light are followed both ways
    /// until a light run as long as a quiet zone (`quietModules`, the module being measured near the
    /// point) or a dark run as long as that. Nil when the line holds no bars there.
    static func scanLineExtent(_ image: GrayImage, through point: PixelPoint, horizontal: Bool, quietModules: Double = 7) -> (PixelPoint, PixelPoint)? {
        let length = horizontal ? image.width : image.height
        let fixed = min(max(Int(horizontal ? point.y : point.x), 0), (horizontal ? image.height : image.width) - 1)
        let start = min(max(Int(horizontal ? point.x : point.y), 0), length - 1)
        func value(_ i: Int) -> Int { Int(horizontal ? image.pixels[fixed * image.width + i] : image.pixels[i * image.width + fixed]) }
        // Threshold halfway between the darkest and lightest pixels near the point.
        let window = max(length / 3, 64)
        var lowest = 255, highest = 0
        for i in max(start - window, 0)..<min(start + window, length) {
            lowest = min(lowest, value(i))
            highest = max(highest, value(i))
        }
        guard highest - lowest >= 40 else { return nil }
        let threshold = (lowest + highest) / 2
        // Runs of equal colour along the whole line.
        var runs: [(start: Int, end: Int, dark: Bool)] = []
        for i in 0..<length {
            let dark = value(i) < threshold
            if let last = runs.last, last.dark == dark { runs[runs.count - 1].end = i + 1 } else { runs.append((i, i + 1, dark)) }
        }
        guard let here = runs.firstIndex(where: { $0.start <= start && start < $0.end }) else { return nil }
        let near = runs[max(here - 12, 0)...min(here + 12, runs.count - 1)].map { $0.end - $0.start }.sorted()
        let module = Double(near[near.count / 4])
        let quiet = max(6, Int((quietModules * module).rounded()))
        func isBar(_ run: (start: Int, end: Int, dark: Bool)) -> Bool { run.end - run.start < quiet }
        var first = here, last = here
        while first > 0 && isBar(runs[first - 1]) { first -= 1 }
        while last < runs.count - 1 && isBar(runs[last + 1]) { last += 1 }
        // The code starts and ends with a bar.
        while first < last && !runs[first].dark { first += 1 }
        while last > first && !runs[last].dark { last -= 1 }
        guard runs[first].dark, runs[last].end - runs[first].start >= quiet else { return nil }
        let from = Double(runs[first].start), to = Double(runs[last].end)
        let across = Double(fixed) + 0.5
        return horizontal
            ? (PixelPoint(x: from, y: across), PixelPoint(x: to, y: across))
            : (PixelPoint(x: across, y: from), PixelPoint(x: across, y: to))
    }

    /// Grows the position of a linear code to the whole height of its bars.
    ///
    /// Decoders report where their scan lines crossed the code: one line, or the first and last of
    /// the lines that agreed. From the middle of that position, this follows the bars in the image:
    /// the direction of the bars is measured (the profile across the code, moved along the bars,
    /// stays the same), then lines parallel to the profile are stepped outwards along the bars while
    /// their profile still matches. The result is the quadrilateral of the bars, the reading line
    /// from top-left to top-right. When the image does not confirm a larger extent, the decoder's own
    /// position is kept.
    static func linearExtent(_ quad: [PixelPoint], in image: GrayImage) -> [PixelPoint] {
        guard quad.count == 4 else { return quad }
        let start = PixelPoint.mid(quad[0], quad[3]), end = PixelPoint.mid(quad[1], quad[2])
        let reading = end - start
        let length = reading.length
        guard length >= 12 else { return quad }
        let sampler = ProfileSampler(image: image, count: min(max(Int(length / 2), 32), 200))
        // 1. The direction of the bars, from how far the profile shifts a few pixels off the line.
        var u = reading.normalized
        var down = u.perpendicular
        let reference = sampler.profile(start, end)
        guard let reference else { return quad }
        let probe = 5.0
        var shifts: [Double] = []
        for side in [1.0, -1.0] {
            var best = (score: -2.0, shift: 0.0)
            for step in -12...12 {
                let shift = Double(step) * probe * 0.06
                let offset = down * (side * probe) + u * shift
                if let profile = sampler.profile(start + offset, end + offset) {
                    let score = ProfileSampler.correlation(reference, profile)
                    if score > best.score { best = (score, shift) }
                }
            }
            if best.score > 0.6 { shifts.append(best.shift) }
        }
        if shifts.count == 2 {
            let bars = (down * (2 * probe) + u * (shifts[0] - shifts[1])).normalized
            down = bars
            u = PixelPoint(x: bars.y, y: -bars.x)
        }
        // 2. The reading line across the bars, through the middle of the decoders' position.
        let center = PixelPoint.mid(start, end)
        let a = center + u * (start - center).dot(u)
        let b = center + u * (end - center).dot(u)
        guard let profile = sampler.profile(a, b) else { return quad }
        // 3. Step outwards along the bars while the profile holds; a small sideways drift follows
        // bars that converge under perspective.
        func walk(_ direction: Double) -> (PixelPoint, PixelPoint, Double) {
            var current = (a, b)
            var good = (a, b, 0.0)
            var misses = 0
            var travelled = 0.0
            let limit = 2.5 * (b - a).length
            // How far an end may drift per step: bars 20% closer together at the far edge of a code as
            // long as it is tall are ~10% of its length away over its height; a long code drifts more.
            let drift = max(0.5, (b - a).length / 400)
            while travelled < limit {
                travelled += 1
                var best: (score: Double, line: (PixelPoint, PixelPoint))?
                // Each end may drift sideways on its own: bars that converge (perspective) narrow the code.
                for startDrift in [-drift, 0, drift] {
                    for endDrift in [-drift, 0, drift] {
                        let line = (current.0 + down * direction + u * startDrift, current.1 + down * direction + u * endDrift)
                        guard let candidate = sampler.profile(line.0, line.1) else { continue }
                        let score = ProfileSampler.correlation(profile, candidate)
                        if score > best?.score ?? -Double.infinity { best = (score, line) }
                    }
                }
                guard let best else { break }
                current = best.line
                if best.score >= 0.55 {
                    good = (current.0, current.1, travelled)
                    misses = 0
                } else {
                    misses += 1
                    if misses > 2 { break }
                }
            }
            return good
        }
        let top = walk(-1), bottom = walk(1)
        var refined = [top.0, top.1, bottom.1, bottom.0]
        // Never shorter than what the decoders saw: where their scan lines reach further along the
        // bars, the sides found by the walk are extended to that depth.
        let depths = quad.map { ($0 - center).dot(down) }
        func extend(_ from: PixelPoint, _ to: PixelPoint, reaching depth: Double) -> PixelPoint {
            let side = to - from
            let gain = side.dot(down)
            let current = (to - center).dot(down)
            guard abs(gain) > 1e-6, abs(depth) > abs(current) + 0.5 else { return to }
            return to + side * ((depth - current) / gain)
        }
        if let deepest = depths.min(), deepest < 0 {
            refined[0] = extend(bottom.0, top.0, reaching: deepest)
            refined[1] = extend(bottom.1, top.1, reaching: deepest)
        }
        if let deepest = depths.max(), deepest > 0 {
            refined[3] = extend(top.0, bottom.0, reaching: deepest)
            refined[2] = extend(top.1, bottom.1, reaching: deepest)
        }
        return contains(refined, center) ? refined : quad
    }
}

/// Samples grey profiles along lines of an image (bilinear), for comparing them.
struct ProfileSampler {
    let image: GrayImage
    let count: Int

    /// `count` samples from `a` to `b`, zero-mean and unit-norm; nil when the line leaves the image
    /// or the profile is flat.
    func profile(_ a: PixelPoint, _ b: PixelPoint) -> [Double]? {
        let width = Double(image.width), height = Double(image.height)
        var values = [Double](repeating: 0, count: count)
        let step = (b - a) * (1 / Double(count - 1))
        var sum = 0.0
        for index in 0..<count {
            let point = a + step * Double(index)
            // Pixel centres are at +0.5.
            let x = point.x - 0.5, y = point.y - 0.5
            guard x >= 0, y >= 0, x <= width - 1, y <= height - 1 else { return nil }
            let x0 = Int(x), y0 = Int(y)
            let x1 = Swift.min(x0 + 1, image.width - 1), y1 = Swift.min(y0 + 1, image.height - 1)
            let fx = x - Double(x0), fy = y - Double(y0)
            let p00 = Double(image.pixels[y0 * image.width + x0]), p10 = Double(image.pixels[y0 * image.width + x1])
            let p01 = Double(image.pixels[y1 * image.width + x0]), p11 = Double(image.pixels[y1 * image.width + x1])
            let value = (p00 * (1 - fx) + p10 * fx) * (1 - fy) + (p01 * (1 - fx) + p11 * fx) * fy
            values[index] = value
            sum += value
        }
        let mean = sum / Double(count)
        var norm = 0.0
        for index in values.indices {
            values[index] -= mean
            norm += values[index] * values[index]
        }
        // A flat line (blank paper) has no profile.
        guard norm / Double(count) > 16 else { return nil }
        let scale = 1 / norm.squareRoot()
        for index in values.indices { values[index] *= scale }
        return values
    }

    /// The normalized correlation of two profiles made by `profile` (-1...1).
    static func correlation(_ a: [Double], _ b: [Double]) -> Double {
        var sum = 0.0
        for index in a.indices { sum += a[index] * b[index] }
        return sum
    }
}
