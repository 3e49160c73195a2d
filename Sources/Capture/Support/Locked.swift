import Synchronization

/// A value behind a lock, for the mutable settings of Sendable model objects.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0) }
    }
    /// One field of the value, read or written under the lock: `settings[\.size]`.
    subscript<Field: Sendable>(_ field: WritableKeyPath<Value, Field>) -> Field {
        get { mutex.withLock { $0[keyPath: field] } }
        set { mutex.withLock { $0[keyPath: field] = newValue } }
    }
}
