import Locking

/// The waits on a bus: each waiter is registered with what it waits for (a match) and is answered
/// once, by the first message that matches, on the thread that posted it. A bus's sync handler hands
/// every message to `dispatch`; a waiter is registered BEFORE the action that posts the awaited
/// message, so a message posted meanwhile is not missed.
///
/// Waiters are known by a token (any object: the promise the waiting task awaits), so one that is no
/// longer awaited (its wait timed out) is cancelled by it; the registry holds no reference to it.
public final class BusWaiters<Outcome: Sendable>: Sendable {
    private struct Waiter: Sendable {
        let token: ObjectIdentifier
        let match: @Sendable (Message) -> Outcome?
        let answer: @Sendable (Outcome) -> Void
    }
    private struct Registry: Sendable {
        var next = 0
        var waiters: [Int: Waiter] = [:]
    }
    private let registry = Locked(Registry())

    /// No waiter yet.
    public init() {}

    /// Registers a waiter known by `token`: `match` is shown each message (on the posting thread, so
    /// it must not block) until it gives an outcome, which goes to `answer`; the waiter is then gone.
    public func register(
        for token: AnyObject, match: @escaping @Sendable (Message) -> Outcome?, answer: @escaping @Sendable (Outcome) -> Void
    ) {
        let waiter = Waiter(token: ObjectIdentifier(token), match: match, answer: answer)
        registry.withLock { registry in
            registry.next += 1
            registry.waiters[registry.next] = waiter
        }
    }

    /// Forgets the waiters known by `token` (unanswered), so that nothing they hold outlives the wait.
    public func cancel(_ token: AnyObject) {
        let identifier = ObjectIdentifier(token)
        registry.withLock { registry in registry.waiters = registry.waiters.filter { $0.value.token != identifier } }
    }

    /// Answers every waiter `message` matches, and forgets them; returns how many were answered. The
    /// answers run after the registry's lock is released.
    @discardableResult
    public func dispatch(_ message: Message) -> Int {
        let matched = registry.withLock { registry -> [(Waiter, Outcome)] in
            var matched: [(Waiter, Outcome)] = []
            for (id, waiter) in registry.waiters.sorted(by: { $0.key < $1.key }) {
                guard let outcome = waiter.match(message) else { continue }
                matched.append((waiter, outcome))
                registry.waiters[id] = nil
            }
            return matched
        }
        for (waiter, outcome) in matched { waiter.answer(outcome) }
        return matched.count
    }

    /// Answers every waiter with `outcome` and forgets them all (the bus's pipeline is going away).
    public func cancelAll(answering outcome: Outcome) {
        let all = registry.withLock { registry in
            defer { registry.waiters.removeAll() }
            return registry.waiters.sorted { $0.key < $1.key }.map(\.value)
        }
        for waiter in all { waiter.answer(outcome) }
    }

    /// How many waiters wait now.
    public var count: Int { registry.withLock { $0.waiters.count } }
}

extension Message {
    /// True when `object` posted the message itself (not an element inside it).
    public func isPosted(by object: GObjectRef) -> Bool { message.pointee.src == object.pointer }

    /// True for the state change of `object` itself that brought it to `state`.
    public func isStateChange(of object: GObjectRef, to state: ElementState) -> Bool {
        kind == .stateChanged && isPosted(by: object) && stateChange?.new == state
    }

    /// True for an end of stream a sink inside `bin` posted, which the bin forwarded (its
    /// `message-forward` is on): the bin's file or stream is finished.
    public func isForwardedEndOfStream(from bin: GObjectRef) -> Bool {
        isPosted(by: bin) && forwarded?.kind == .eos
    }
}
