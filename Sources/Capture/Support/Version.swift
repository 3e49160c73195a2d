/// The version of the capture framework and of the `capture` tool.
public enum CaptureVersion {
    public static let string = "0.1.0"
}
