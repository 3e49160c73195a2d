import CX11
import Foundation
import Synchronization

/// An application's X11 window as a preview sees it: its size now, and its size as it changes
/// (StructureNotify events read on a connection and a thread of the preview's own, so the
/// application's own connection and event loop are left alone).
final class X11Window: @unchecked Sendable {
    // @unchecked: the display connection is used by the watching thread only once it started (Xlib
    // connections are not shared between threads here); `stopFDs` are written once, before that.
    let handle: UInt
    private let display: OpaquePointer
    private let stopPipe: (read: Int32, write: Int32)
    private let stopped = Atomic<Bool>(false)

    /// The size of window `handle` on the display `DISPLAY` names, read with its own connection.
    static func size(of handle: UInt) throws(CaptureError) -> Size {
        let window = try X11Window(handle: handle, watching: false)
        defer { window.close() }
        return try window.currentSize()
    }

    /// Opens a connection to the display and checks that `handle` is a window there. With `watching`,
    /// asks the server for the window's structure events (resizes, destruction).
    init(handle: UInt, watching: Bool = true) throws(CaptureError) {
        guard let display = XOpenDisplay(nil) else {
            throw .invalidConfiguration(
                object: "preview window \(Self.hex(handle))",
                reason: "cannot open the X display '\(ProcessInfo.processInfo.environment["DISPLAY"] ?? "")' (set DISPLAY to the display the window is on)")
        }
        self.display = display
        self.handle = handle
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            XCloseDisplay(display)
            throw .invalidConfiguration(object: "preview window \(Self.hex(handle))", reason: "no pipe: \(String(cString: strerror(errno)))")
        }
        stopPipe = (fds[0], fds[1])
        let exists = Self.withErrorsCaught(display) { display in
            var attributes = XWindowAttributes()
            guard XGetWindowAttributes(display, Window(handle), &attributes) != 0 else { return false }
            if watching { XSelectInput(display, Window(handle), StructureNotifyMask) }
            return true
        }
        guard exists else {
            close()
            throw .invalidConfiguration(
                object: "preview window \(Self.hex(handle))", reason: "no such window on the display (a window id as xwininfo prints it, e.g. 0x1e00007)")
        }
    }

    /// `0x1e00007`.
    static func hex(_ handle: UInt) -> String { "0x" + String(handle, radix: 16) }

    /// The window's size now.
    func currentSize() throws(CaptureError) -> Size {
        var attributes = XWindowAttributes()
        let read = Self.withErrorsCaught(display) { XGetWindowAttributes($0, Window(handle), &attributes) != 0 }
        guard read, attributes.width > 0, attributes.height > 0 else {
            throw .invalidConfiguration(object: "preview window \(Self.hex(handle))", reason: "the window is gone")
        }
        return Size(width: Int(attributes.width), height: Int(attributes.height))
    }

    /// Calls `resized` on a thread of its own with each new size of the window, until `stop()` or the
    /// window's destruction (then `gone`).
    func watch(resized: @escaping @Sendable (Size) -> Void, gone: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            let descriptor = XConnectionNumber(display)
            var last: Size? = nil
            loop: while !stopped.load(ordering: .acquiring) {
                while XPending(display) > 0 {
                    var event = XEvent()
                    XNextEvent(display, &event)
                    switch event.type {
                    case ConfigureNotify:
                        let size = Size(width: Int(event.xconfigure.width), height: Int(event.xconfigure.height))
                        if size != last, size.width > 0, size.height > 0 {
                            last = size
                            resized(size)
                        }
                    case DestroyNotify:
                        gone()
                        break loop
                    default: break
                    }
                }
                var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
                // No time limit: the stop pipe ends the wait.
                if poll(&fds, 2, -1) < 0 && errno != EINTR { break }
                if fds[1].revents != 0 { break }
            }
            close()
        }
        thread.name = "capture.x11"
        thread.start()
    }

    /// Ends the watch; the thread closes the connection.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
    }

    private let closed = Atomic<Bool>(false)
    private func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        XCloseDisplay(display)
        Foundation.close(stopPipe.read)
        Foundation.close(stopPipe.write)
    }

    /// X errors of the requests `body` makes on `display`, caught: an error handler is installed for
    /// the duration (Xlib's default one exits the process), the requests are synced, the previous
    /// handler restored. False when `body` returned false or an error came back.
    private static func withErrorsCaught(_ display: OpaquePointer, _ body: (OpaquePointer) -> Bool) -> Bool {
        errorsLock.withLock { _ in
            lastError.store(0, ordering: .relaxed)
            let previous = XSetErrorHandler { _, event in
                X11Window.lastError.store(Int(event?.pointee.error_code ?? 1), ordering: .relaxed)
                return 0
            }
            let result = body(display)
            XSync(display, 0)
            XSetErrorHandler(previous)
            return result && lastError.load(ordering: .relaxed) == 0
        }
    }
    private static let lastError = Atomic<Int>(0)
    private static let errorsLock = Locked(())

    // MARK: Windows that may go away under a sink

    /// Makes the X errors that requests on `handle` meet once the application destroyed that window
    /// (ximagesink's last puts into a window that is gone: BadWindow, BadDrawable, BadMatch) harmless
    /// to the process: Xlib's default handler prints them and exits, which would end the program, and
    /// lose its recordings, because a window was closed before the session stopped. Every other error
    /// goes on to the handler that was there before (the application's, GTK's, or Xlib's own).
    static func tolerateLoss(of handle: UInt) {
        errorsLock.withLock { _ in
            tolerated.withLock { _ = $0.insert(handle) }
            guard !filterInstalled.exchange(true, ordering: .acquiringAndReleasing) else { return }
            let previous = XSetErrorHandler { display, event in
                guard let event else { return 0 }
                let code = Int32(event.pointee.error_code)
                let window = UInt(event.pointee.resourceid)
                if code == BadWindow || code == BadDrawable || code == BadMatch, X11Window.tolerated.withLock({ $0.contains(window) }) {
                    return 0
                }
                return X11Window.previousHandler.value.map { $0(display, event) } ?? 0
            }
            previousHandler.value = previous
        }
    }
    private static let tolerated = Locked<Set<UInt>>([])
    private static let filterInstalled = Atomic<Bool>(false)
    private static let previousHandler = Locked<XErrorHandler?>(nil)
}
