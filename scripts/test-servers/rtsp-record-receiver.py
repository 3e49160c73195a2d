#!/usr/bin/python3
"""A receiver for the stream tests: an RTSP server in RECORD mode (GStreamer's RTSP server library,
the way a media server takes a publisher) on 127.0.0.1:PORT/MOUNT that writes the H.264 a client
publishes to OUT (MPEG-TS). Prints "listening" once it listens; stops on SIGTERM/SIGINT.

usage: rtsp-record-receiver.py PORT MOUNT OUT.ts
"""
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

port, mount, out = sys.argv[1], sys.argv[2], sys.argv[3]
Gst.init(None)
loop = GLib.MainLoop()
server = GstRtspServer.RTSPServer()
server.set_address("127.0.0.1")
server.set_service(port)
factory = GstRtspServer.RTSPMediaFactory()
factory.set_transport_mode(GstRtspServer.RTSPTransportMode.RECORD)
# A test fixture's own fixed description; the output path comes from the test, never from a user.
factory.set_launch(f'( rtph264depay name=depay0 ! h264parse ! mpegtsmux ! filesink location="{out}" sync=false )')
server.get_mount_points().add_factory(mount, factory)
if server.attach(None) == 0:
    sys.exit(f"cannot listen on 127.0.0.1:{port}")
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, loop.quit)
print("listening", flush=True)
loop.run()
