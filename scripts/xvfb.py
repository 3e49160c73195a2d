"""An X server of a test's own: Xvfb picks a free display number itself (-displayfd) and says which,
so stale lock files of servers that were killed, or another test's server starting at the same moment,
never make a test take a display that is not its own.

    import xvfb
    server, display = xvfb.start("1280x800x24")   # display is ":N"; server.kill() when done
"""
import os
import select
import subprocess
import time


def start(screen="1280x800x24", timeout=20):
    """Starts Xvfb on a display number of its choosing and returns (process, ":N") once it accepts
    connections (it writes the number when it is ready). Raises RuntimeError when it does not start
    within `timeout` seconds."""
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", screen, "-nolisten", "tcp"],
        pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(write)
    number = b""
    deadline = time.monotonic() + timeout
    try:
        while not number.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([read], [], [], max(0, left))
            chunk = os.read(read, 16) if ready else b""
            if not chunk:
                server.kill()
                server.wait()
                raise RuntimeError("Xvfb did not start (is the xvfb package installed?)")
            number += chunk
    finally:
        os.close(read)
    return server, ":" + number.decode().strip()
