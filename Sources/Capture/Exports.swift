// The barcode types (`MetadataObjectType`, `MetadataMachineReadableCodeObject`, `NormalizedRect`,
// `BarcodeReader` ...) are part of the capture API, as AVFoundation's metadata objects are: a user's
// `import Capture` sees them.
@_exported import Barcodes
