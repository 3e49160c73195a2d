import Capture
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// What one client has not been sent yet: at most `capacity` items; when a new one comes to a full
/// queue the oldest is dropped and counted. The producer (a GStreamer streaming thread, the event
/// pump) never waits; the client's own thread takes what is there, waiting (bounded) when it is empty,
/// and can watch the client's socket meanwhile, so that a client that leaves is noticed at once.
public final class ClientQueue<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var dropped = 0
        var delivered = 0
        var closed = false
        /// The consumer waits: the next push (or `close()`) writes a byte to `wake`.
        var waiting = false
    }
    private let state = Locked(State())
    /// A pipe, nonblocking at both ends: a byte written wakes the consumer's `poll` (which may watch the
    /// client's socket too). Both -1 when no pipe could be made (no descriptor left): the consumer then
    /// waits its whole timeout, without being woken.
    private let wake: (read: Int32, write: Int32)
    /// The most items kept.
    public let capacity: Int

    /// An empty queue that keeps at most `capacity` items (at least one).
    public init(capacity: Int) {
        precondition(capacity > 0, "a client queue holds at least one item")
        self.capacity = capacity
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
        } else {
            ends = [-1, -1]
        }
        wake = (ends[0], ends[1])
    }

    deinit {
        if wake.read >= 0 { Glibc.close(wake.read) }
        if wake.write >= 0 { Glibc.close(wake.write) }
    }

    /// Adds an item, dropping the oldest when full; returns true when one was dropped. Never blocks.
    @discardableResult
    public func push(_ item: Item) -> Bool {
        let (dropped, waiting) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.items.append(item)
            defer { state.waiting = false }
            guard state.items.count > capacity else { return (false, state.waiting) }
            state.items.removeFirst()
            state.dropped += 1
            return (true, state.waiting)
        }
        if waiting { signal() }
        return dropped
    }

    /// Everything queued, oldest first; waits up to `timeout` while there is nothing. Empty on timeout
    /// or once closed.
    public func take(waiting timeout: Duration) -> [Item] {
        take(waiting: timeout, watching: nil).items
    }

    /// Everything queued, oldest first; waits up to `timeout` while there is nothing, watching `socket`
    /// (a client's connection) meanwhile: returns at once, empty and with `hungUp` true, when its peer
    /// closes or resets it (bytes the client sends meanwhile are read and dropped). Empty on timeout or
    /// once closed.
    public func take(waiting timeout: Duration, watching socket: Int32?) -> (items: [Item], hungUp: Bool) {
        let deadline = ContinuousClock.now + timeout
        while true {  // bounded by the deadline: each turn takes what is there, or waits for the rest of it
            let (items, closed) = state.withLock { state -> ([Item], Bool) in
                defer {
                    state.delivered += state.items.count
                    state.items.removeAll()
                }
                state.waiting = state.items.isEmpty && !state.closed
                return (state.items, state.closed)
            }
            if !items.isEmpty || closed { return (items, false) }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return ([], false) }
            var watched = [
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0), pollfd(fd: socket ?? -1, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&watched, 2, left.pollMilliseconds)
            if ready < 0 && errno != EINTR { return ([], false) }  // never seen: bad arguments or no memory
            if watched[0].revents != 0 { drainWake() }
            if let socket, watched[1].revents != 0, Self.hungUp(socket, events: watched[1].revents) { return ([], true) }
        }
    }

    /// Wakes the consumer; later pushes are ignored.
    public func close() {
        state.withLock {
            $0.closed = true
            $0.waiting = false
        }
        signal()
    }

    /// True once `close()` was called.
    public var isClosed: Bool { state.withLock { $0.closed } }
    /// Items dropped because the client was behind.
    public var droppedCount: Int { state.withLock { $0.dropped } }
    /// Items handed to the client's thread.
    public var deliveredCount: Int { state.withLock { $0.delivered } }

    private func signal() {
        guard wake.write >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)  // a full pipe already wakes the consumer
    }

    private func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 64)
        for _ in 0..<16 {  // a few bytes at most: each push while waiting writes one
            let count = bytes.withUnsafeMutableBytes { read(wake.read, $0.baseAddress, $0.count) }
            if count < bytes.count { return }
        }
    }

    /// True when the socket's peer closed or reset it; drops what it sent otherwise.
    private static func hungUp(_ socket: Int32, events: Int16) -> Bool {
        if events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return true }
        var scratch = [UInt8](repeating: 0, count: 512)
        let count = scratch.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count == 0 { return true }
        return count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
    }
}
