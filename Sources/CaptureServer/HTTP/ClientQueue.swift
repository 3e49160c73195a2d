import Capture
import Dispatch

/// What one client has not been sent yet: at most `capacity` items; when a new one comes to a full
/// queue the oldest is dropped and counted. The producer (a GStreamer streaming thread, the event
/// pump) never waits; the client's own thread takes what is there, waiting (bounded) when it is empty.
public final class ClientQueue<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var dropped = 0
        var delivered = 0
        var closed = false
    }
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    /// The most items kept.
    public let capacity: Int

    /// An empty queue that keeps at most `capacity` items (at least one).
    public init(capacity: Int) {
        precondition(capacity > 0, "a client queue holds at least one item")
        self.capacity = capacity
    }

    /// Adds an item, dropping the oldest when full; returns true when one was dropped. Never blocks.
    @discardableResult
    public func push(_ item: Item) -> Bool {
        let dropped = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.items.append(item)
            guard state.items.count > capacity else { return false }
            state.items.removeFirst()
            state.dropped += 1
            return true
        }
        wake.signal()
        return dropped
    }

    /// Everything queued, oldest first; waits up to `timeout` while there is nothing. Empty on timeout
    /// or once closed.
    public func take(waiting timeout: Duration) -> [Item] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (items, closed) = state.withLock { state -> ([Item], Bool) in
                defer {
                    state.delivered += state.items.count
                    state.items.removeAll()
                }
                return (state.items, state.closed)
            }
            if !items.isEmpty || closed { return items }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return [] }
            let (seconds, attoseconds) = left.components
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        }
    }

    /// Wakes the consumer; later pushes are ignored.
    public func close() {
        state.withLock { $0.closed = true }
        wake.signal()
    }

    /// True once `close()` was called.
    public var isClosed: Bool { state.withLock { $0.closed } }
    /// Items dropped because the client was behind.
    public var droppedCount: Int { state.withLock { $0.dropped } }
    /// Items handed to the client's thread.
    public var deliveredCount: Int { state.withLock { $0.delivered } }
}
