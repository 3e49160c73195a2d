import Foundation
import GStreamer
import Synchronization

/// Numbered image files of the stream (the `frames` kind with a `location`): `frames/%05d.png`.
///
/// Each image is encoded in the branch and handed to an appsink; its streaming thread writes it to a
/// temporary file and claims the next number with a hard link, which fails rather than replace a
/// file: two sessions or processes numbering files in one folder never write the same name, and a
/// name appears only once its image is whole.
public final class CaptureImageSequenceOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: a subclass of CaptureOutput (a class Swift cannot check); settings are behind `Locked`.
    private struct Settings {
        var location: String
        var maxFrameRate: Double?
        var size: Size?
    }
    private let settings: Locked<Settings>
    private let saved = Atomic<Int>(0)
    /// The next number to try (set when the branch joins: after the highest one in the folder).
    private let nextNumber = Locked(0)
    /// A write failed since the branch joined (reported once, as a runtime error).
    private let writeFailed = Atomic<Bool>(false)

    /// An output that writes every frame, or at most `maxFrameRate` a second, to numbered image files.
    /// - Parameters:
    ///   - name: The output's name.
    ///   - location: A printf-style pattern (`frames/%05d.png`); the extension chooses PNG or JPEG.
    ///   - maxFrameRate: At most this many frames per second; nil for every frame.
    public init(name: String = "frames", location: String, maxFrameRate: Double? = nil) {
        settings = Locked(Settings(location: location, maxFrameRate: maxFrameRate))
        super.init(name: name)
    }

    /// `frames`, as for `CaptureVideoDataOutput`: the `.pipeline` kind with a `location`.
    public override var kind: String { "frames" }

    /// The printf-style pattern the files are named by; its extension chooses PNG or JPEG.
    public var location: String { settings.value.location }
    /// At most this many files per second (nil: one per frame).
    public var maxFrameRate: Double? {
        get { settings[\.maxFrameRate] }
        set { settings[\.maxFrameRate] = newValue }
    }
    /// The images' size (nil: the session preset's size).
    public var size: Size? {
        get { settings[\.size] }
        set { settings[\.size] = newValue }
    }
    /// Files written so far.
    public var savedFileCount: Int { saved.load(ordering: .relaxed) }

    /// The folder of the numbered files is made before the branch runs.
    override func prepareToRun() throws(CaptureError) {
        try FileNaming.prepareFolder(for: settings.value.location)
    }

    /// Numbering starts after the highest number already in the folder (a second run into the same
    /// folder adds files instead of overwriting the first run's); each file then claims its number.
    override func attach(_ handle: BranchHandle) {
        super.attach(handle)
        let location = settings.value.location
        nextNumber.value = FileNaming.nextIndex(for: location)
        writeFailed.store(false, ordering: .relaxed)
        handle.element("\(name)_sink")?.setAppSinkCallbacks(onSample: { [weak self] sample in
            self?.write(sample, location: location)
        })
    }

    /// Runs on the streaming thread: writes one encoded image under the next free number.
    /// A frame that arrives once the branch is leaving (detached) is not written: every file written
    /// is reported, through the handle taken before writing it.
    private func write(_ sample: SampleView, location: String) {
        guard let handle = handleState.value, let bytes = sample.buffer?.withBytes({ Array($0) }), !bytes.isEmpty else { return }
        let first = nextNumber.value
        do throws(CaptureError) {
            let (path, number) = try FileNaming.writeNew(bytes, to: location, firstIndex: first, start: 0, durable: false)
            nextNumber.value = number + 1
            saved.add(1, ordering: .relaxed)
            handle.post(.frameSaved(output: name, location: path))
        } catch {
            // A folder that cannot be written (removed, full): said once; later frames try again.
            if !writeFailed.exchange(true, ordering: .relaxed) { handle.post(.runtimeError(error)) }
        }
    }

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        let current = settings.value
        let pathExtension = (current.location as NSString).pathExtension.lowercased()
        let encoder: ElementSpec
        switch pathExtension {
        case "png": encoder = ElementSpec("pngenc", name: "\(name)_encode", [("compression-level", "1")])
        case "jpg", "jpeg": encoder = ElementSpec("jpegenc", name: "\(name)_encode")
        default:
            throw .invalidConfiguration(object: description, reason: "location '\(current.location)' must end in .png, .jpg or .jpeg")
        }
        // One %d-style directive and no other '%' (the number is put in by FileNaming, never printf).
        try FileNaming.checkLocation(current.location, pattern: true)
        var elements = try context.videoHead(leaky: true, maxBuffers: 4, size: current.size, maxRate: current.maxFrameRate)
        elements.append(encoder)
        elements.append(
            ElementSpec("appsink", name: "\(name)_sink", [("sync", "false"), ("async", "false"), ("enable-last-sample", "false"), ("wait-on-eos", "false")]))
        return BranchSegment(output: name, kind: kind, chains: [Chain(input: context.videoInput?.input, elements: elements)])
    }
}
