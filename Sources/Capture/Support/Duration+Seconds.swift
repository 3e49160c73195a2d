extension Duration {
    /// The duration in seconds, as a Double (for messages, events and rates).
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
