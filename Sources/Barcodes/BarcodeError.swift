/// Errors of the barcode decoders. `Capture` turns each into the `CaptureError` case of the same name
/// (`unknown-metadata-object-type`, `metadata-object-type-not-available`, `invalid-configuration`).
public enum BarcodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A type name that is not a `MetadataObjectType`.
    case unknownType(name: String, known: [String])
    /// A backend name that is not a `BarcodeBackend`.
    case unknownBackend(name: String, known: [String])
    /// A type the backend cannot read; `object` names who asked (an output, a reader).
    case typeNotAvailable(type: String, object: String, backend: String, available: [String])
    /// A file that is not an image the reader takes.
    case unreadableImage(path: String, reason: String)

    /// A sentence saying what is wrong; for an unknown name it lists the known ones.
    public var description: String {
        switch self {
        case .unknownType(let name, let known):
            "'\(name)' is not a machine-readable code type; the types are \(known.joined(separator: ", "))"
        case .unknownBackend(let name, let known):
            "unknown barcode backend '\(name)'; the backend must be one of \(known.joined(separator: ", "))"
        case .typeNotAvailable(let type, let object, let backend, let available):
            "\(object): the code type '\(type)' is not available with the \(backend) backend; it reads \(available.joined(separator: ", "))"
        case .unreadableImage(let path, let reason):
            "\(path): \(reason)"
        }
    }
}
