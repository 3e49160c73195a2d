import Capture

/// The clients of one stream (event-stream clients, the viewers of a preview), each with a bounded
/// queue of its own: `deliver` pushes to every queue and never waits, so one slow client costs the
/// others nothing; a client more than its queue's capacity behind loses its oldest items.
public final class ClientRegistry<Item: Sendable>: Sendable {
    private let state = Locked<(next: Int, queues: [Int: ClientQueue<Item>])>((0, [:]))

    /// A registry without clients.
    public init() {}

    /// A new client and its queue.
    public func add(capacity: Int) -> (id: Int, queue: ClientQueue<Item>) {
        let queue = ClientQueue<Item>(capacity: capacity)
        let id = state.withLock { state -> Int in
            state.next += 1
            state.queues[state.next] = queue
            return state.next
        }
        return (id, queue)
    }

    /// The client leaves; its queue is closed.
    public func remove(_ id: Int) {
        state.withLock { $0.queues.removeValue(forKey: id) }?.close()
    }

    /// Hands an item to every client (never waits); returns how many were behind (their oldest item
    /// dropped).
    public func deliver(_ item: Item) -> Int {
        state.withLock { Array($0.queues.values) }.reduce(0) { $0 + ($1.push(item) ? 1 : 0) }
    }

    /// Clients now.
    public var count: Int { state.withLock { $0.queues.count } }

    /// Items dropped for the clients still here.
    public var droppedCount: Int { state.withLock { $0.queues.values.reduce(0) { $0 + $1.droppedCount } } }

    /// Ends every client's stream.
    public func closeAll() {
        for queue in state.withLock({ state -> [ClientQueue<Item>] in
            defer { state.queues.removeAll() }
            return Array(state.queues.values)
        }) { queue.close() }
    }
}
