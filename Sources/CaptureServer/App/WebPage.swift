/// The web app: one self-contained HTML document (its script and style inline, nothing fetched from
/// elsewhere). It learns everything from the API and the event stream and writes what it shows with
/// `textContent` and DOM properties, never as markup, so no file name or code value becomes code. A
/// Content-Security-Policy allows only this server and the document's own script and style (by a
/// nonce made for each response).
enum WebPage {
    static func response() -> HTTPResponse {
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<16).map { _ in String(UInt8.random(in: 0...255, using: &generator), radix: 16) }.joined()
        let csp =
            "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; img-src 'self' blob:; media-src 'self' blob:; "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        let html = document.replacingOccurrences(of: "NONCE", with: nonce)
        return HTTPResponse(
            headers: [("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", csp), ("X-Frame-Options", "DENY")],
            body: .bytes(Array(html.utf8)))
    }

    static let document = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Capture</title>
        <style nonce="NONCE">
          :root { color-scheme: dark; font-family: system-ui, sans-serif; }
          body { margin: 0; background: #111; color: #eee; }
          header { display: flex; gap: .75rem; align-items: center; padding: .5rem 1rem; background: #1c1c1c; flex-wrap: wrap; }
          header h1 { font-size: 1.1rem; margin: 0 1rem 0 0; }
          main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(14rem, 1fr); gap: 1rem; padding: 1rem; }
          @media (max-width: 800px) { main { grid-template-columns: 1fr; } }
          #stage { position: relative; background: #000; aspect-ratio: 16 / 9; display: flex; align-items: center; justify-content: center; }
          #stage video, #stage img { width: 100%; height: 100%; object-fit: contain; }
          #stage .hidden, .hidden { display: none !important; }
          #badge { position: absolute; top: .5rem; left: .5rem; background: #0008; padding: .2rem .5rem; border-radius: .3rem; font-size: .8rem; }
          #rec { position: absolute; top: .5rem; right: .5rem; background: #c00; padding: .2rem .6rem; border-radius: .3rem; font-variant-numeric: tabular-nums; }
          .controls { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; margin: .75rem 0; }
          button { background: #333; color: #eee; border: 1px solid #555; border-radius: .4rem; padding: .5rem .9rem; font-size: 1rem; cursor: pointer; }
          button:disabled { opacity: .4; cursor: default; }
          button.on { background: #2a5db0; border-color: #2a5db0; }
          #shutter { width: 4rem; height: 4rem; border-radius: 50%; background: #eee; border: .35rem solid #888; font-size: 0; }
          #record.recording { background: #c00; }
          #error { color: #f88; min-height: 1.2rem; }
          section h2 { font-size: 1rem; margin: .5rem 0; }
          #codes { list-style: none; padding: 0; margin: 0; max-height: 12rem; overflow: auto; font-family: monospace; font-size: .85rem; }
          #gallery { display: grid; grid-template-columns: repeat(auto-fill, minmax(8rem, 1fr)); gap: .5rem; }
          #gallery figure { margin: 0; background: #1c1c1c; padding: .3rem; border-radius: .3rem; }
          #gallery img, #gallery video { width: 100%; aspect-ratio: 16 / 9; object-fit: cover; background: #000; }
          #gallery figcaption { font-size: .75rem; overflow-wrap: anywhere; }
          #viewer { max-width: 100%; margin-top: .5rem; }
        </style>
        </head>
        <body>
        <header>
          <h1>Capture</h1>
          <span id="state">connecting…</span>
          <span id="transport"></span>
          <span class="controls">
            <button id="mode-photo" class="on">Photo</button>
            <button id="mode-video">Video</button>
          </span>
          <span class="controls">
            <button id="flash" class="hidden" title="flash mode">Flash</button>
            <button id="torch" class="hidden" title="torch">Torch</button>
            <button id="camera" class="hidden" title="switch camera">Camera</button>
            <button id="session" title="start or stop the camera">Stop</button>
          </span>
        </header>
        <main>
          <div>
            <div id="stage" data-state="waiting">
              <video id="live" class="hidden" autoplay muted playsinline></video>
              <img id="live-mjpeg" class="hidden" alt="live preview">
              <span id="badge">no preview yet</span>
              <span id="rec" class="hidden">REC 0:00</span>
            </div>
            <div class="controls">
              <button id="shutter" title="take a photo">Take photo</button>
              <button id="record" class="hidden">Record</button>
              <span id="error" role="alert"></span>
            </div>
            <section>
              <h2>Last capture</h2>
              <img id="viewer" class="hidden" alt="last photo">
            </section>
          </div>
          <aside>
            <section id="codes-section" class="hidden">
              <h2>Codes</h2>
              <ul id="codes"></ul>
            </section>
            <section>
              <h2>Gallery</h2>
              <div id="gallery"></div>
            </section>
          </aside>
        </main>
        <script nonce="NONCE">
        "use strict";
        const params = new URLSearchParams(location.search);
        const token = params.get("token");
        const $ = (id) => document.getElementById(id);
        function withToken(path) {
          return token ? path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : path;
        }
        function showError(text) { $("error").textContent = text || ""; }
        async function call(method, path, body) {
          const options = { method, headers: {} };
          if (body !== undefined) { options.headers["Content-Type"] = "application/json"; options.body = JSON.stringify(body); }
          const response = await fetch(withToken(path), options);
          const answer = await response.json().catch(() => ({}));
          if (!response.ok) { showError(answer.message || response.statusText); throw new Error(answer.message || response.statusText); }
          showError("");
          if (answer.status) render(answer.status);
          return answer;
        }

        // Stats the tests and the latency benchmark read: frames shown, the largest gap between them.
        // latencies: capture (the frame's timestamp on the server's clock) to display, in ms, newest last.
        const stats = { frames: 0, maxGapMs: 0, last: 0, transport: "", latencies: [], clockEpoch: null,
                        reset() { this.frames = 0; this.maxGapMs = 0; this.last = 0; this.latencies = []; } };
        function latency(ms) { stats.latencies.push(ms); if (stats.latencies.length > 2000) stats.latencies.shift(); }
        window.captureStats = stats;
        function frameShown() {
          const now = performance.now();
          if (stats.last) stats.maxGapMs = Math.max(stats.maxGapMs, now - stats.last);
          stats.last = now;
          stats.frames += 1;
          if (stats.frames === 1) { $("stage").dataset.state = "playing"; $("badge").textContent = "live · " + stats.transport; }
        }

        // --- Live preview: WebRTC, else MJPEG -------------------------------------------------------------
        let peer = null, peerId = null;
        async function startWebRTC() {
          const offer = await call("POST", "/api/webrtc/offer", {});
          peerId = offer.id;
          peer = new RTCPeerConnection({ iceServers: [] });
          const video = $("live");
          peer.ontrack = (event) => { video.srcObject = event.streams[0] || new MediaStream([event.track]); };
          peer.onconnectionstatechange = () => {
            if (peer && (peer.connectionState === "failed")) { fallbackToMJPEG("WebRTC connection failed"); }
          };
          await peer.setRemoteDescription({ type: "offer", sdp: offer.sdp });
          const answer = await peer.createAnswer();
          await peer.setLocalDescription(answer);
          await new Promise((resolve) => {
            if (peer.iceGatheringState === "complete") return resolve();
            const done = () => { if (peer.iceGatheringState === "complete") resolve(); };
            peer.addEventListener("icegatheringstatechange", done);
            setTimeout(resolve, 3000);
          });
          await call("POST", "/api/webrtc/answer", { id: peerId, sdp: peer.localDescription.sdp });
          video.classList.remove("hidden");
          stats.transport = "webrtc";
          $("transport").textContent = "WebRTC";
          call("GET", "/api/status").then((status) => { stats.clockEpoch = status.clockEpoch || null; render(status); }).catch(() => {});
          if (video.requestVideoFrameCallback) {
            const tick = (now, metadata) => {
              frameShown();
              if (stats.clockEpoch !== null && metadata && metadata.rtpTimestamp !== undefined) {
                // RTP time is the frame's running time at 90 kHz (32 bits); unwrap it near the present.
                const period = 4294967296 / 90;
                const shown = performance.timeOrigin + (metadata.expectedDisplayTime || now);
                let captured = stats.clockEpoch + metadata.rtpTimestamp / 90;
                captured += Math.round((shown - captured) / period) * period;
                latency(shown - captured);
              }
              video.requestVideoFrameCallback(tick);
            };
            video.requestVideoFrameCallback(tick);
          } else {
            video.addEventListener("playing", frameShown);
          }
          video.play().catch(() => {});
        }
        function stopWebRTC() {
          if (peer) { peer.close(); peer = null; }
          if (peerId) { navigator.sendBeacon(withToken("/api/webrtc/close?id=" + encodeURIComponent(peerId))); peerId = null; }
        }
        let mjpegAbort = null;
        async function startMJPEG() {
          stats.transport = "mjpeg";
          $("transport").textContent = "MJPEG";
          const image = $("live-mjpeg");
          $("live").classList.add("hidden");
          image.classList.remove("hidden");
          if (!window.ReadableStream || !window.AbortController) {  // plain multipart in an <img>
            image.addEventListener("load", frameShown);
            image.src = withToken("/stream.mjpeg");
            return;
          }
          mjpegAbort = new AbortController();
          const response = await fetch(withToken("/stream.mjpeg"), { signal: mjpegAbort.signal });
          const reader = response.body.getReader();
          let buffer = new Uint8Array(0);
          const find = (bytes, pattern, from) => {
            outer: for (let i = from; i <= bytes.length - pattern.length; i++) {
              for (let j = 0; j < pattern.length; j++) if (bytes[i + j] !== pattern[j]) continue outer;
              return i;
            }
            return -1;
          };
          const crlf2 = [13, 10, 13, 10];
          let previousURL = null;
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            const joined = new Uint8Array(buffer.length + value.length);
            joined.set(buffer); joined.set(value, buffer.length);
            buffer = joined;
            for (;;) {
              const headEnd = find(buffer, crlf2, 0);
              if (headEnd < 0) break;
              const head = new TextDecoder().decode(buffer.subarray(0, headEnd));
              const match = /Content-Length:\s*(\d+)/i.exec(head);
              const captured = /X-Capture-Time:\s*([\d.]+)/i.exec(head);
              if (!match) { buffer = buffer.subarray(headEnd + 4); continue; }
              const length = Number(match[1]);
              if (buffer.length < headEnd + 4 + length + 2) break;
              const jpeg = buffer.slice(headEnd + 4, headEnd + 4 + length);
              buffer = buffer.subarray(headEnd + 4 + length + 2);
              const url = URL.createObjectURL(new Blob([jpeg], { type: "image/jpeg" }));
              image.onload = () => {
                if (previousURL) URL.revokeObjectURL(previousURL);
                previousURL = url;
                frameShown();
                if (captured) latency(Date.now() - Number(captured[1]));
              };
              image.src = url;
            }
          }
        }
        function fallbackToMJPEG(why) {
          stopWebRTC();
          if (stats.transport === "mjpeg") return;
          $("badge").textContent = "MJPEG (" + why + ")";
          startMJPEG().catch((error) => showError("preview: " + error.message));
        }

        // --- State ---------------------------------------------------------------------------------------
        let recordingSince = null, recordingBase = 0;
        function render(status) {
          $("state").textContent = status.running ? "running" : "stopped";
          $("session").textContent = status.running ? "Stop" : "Start";
          $("mode-photo").classList.toggle("on", status.mode === "photo");
          $("mode-video").classList.toggle("on", status.mode === "video");
          $("record").classList.toggle("hidden", status.mode !== "video");
          $("shutter").disabled = !status.photo || !status.running;
          $("codes-section").classList.toggle("hidden", !status.codes);
          if (status.flash) {
            $("flash").classList.toggle("hidden", !status.flash.available);
            $("flash").textContent = "Flash " + status.flash.mode;
          }
          if (status.torch) {
            $("torch").classList.toggle("hidden", !status.torch.available);
            $("torch").classList.toggle("on", status.torch.on);
          }
          if (status.camera) {
            $("camera").classList.toggle("hidden", !status.camera.switchable);
            $("camera").textContent = "Camera: " + status.camera.label;
          }
          setRecording(status.recording, status.recordingSeconds || 0);
        }
        function setRecording(on, seconds) {
          $("record").classList.toggle("recording", on);
          $("record").textContent = on ? "Stop" : "Record";
          $("rec").classList.toggle("hidden", !on);
          $("mode-photo").disabled = on;
          if (on && recordingSince === null) { recordingSince = performance.now(); recordingBase = seconds; }
          if (!on) recordingSince = null;
        }
        setInterval(() => {
          if (recordingSince === null) return;
          const total = Math.floor(recordingBase + (performance.now() - recordingSince) / 1000);
          $("rec").textContent = "REC " + Math.floor(total / 60) + ":" + String(total % 60).padStart(2, "0");
        }, 250);

        async function refreshGallery() {
          const answer = await call("GET", "/api/media?limit=60");
          const gallery = $("gallery");
          gallery.replaceChildren();
          for (const item of answer.items) {
            const figure = document.createElement("figure");
            figure.className = "item";
            figure.dataset.name = item.name;
            figure.dataset.kind = item.kind;
            const media = document.createElement(item.kind === "photo" ? "img" : "video");
            media.src = withToken(item.url);
            if (item.kind === "photo") { media.alt = item.name; media.loading = "lazy"; } else { media.preload = "metadata"; media.controls = true; }
            const caption = document.createElement("figcaption");
            const link = document.createElement("a");
            link.href = withToken(item.url + "?download=1");
            link.download = item.name.split("/").pop();
            link.className = "download";
            link.textContent = item.name;
            caption.append(link, document.createTextNode(" · " + Math.round(item.size / 1024) + " KiB"));
            figure.append(media, caption);
            gallery.append(figure);
          }
        }
        function showLastPhoto(location) {
          const items = document.querySelectorAll("#gallery figure[data-kind=photo] img");
          const name = location.split("/").pop();
          for (const image of items) {
            if (image.alt.split("/").pop() === name) { $("viewer").src = image.src; $("viewer").classList.remove("hidden"); return; }
          }
        }
        function addCode(event) {
          const list = $("codes");
          const item = document.createElement("li");
          item.textContent = new Date().toLocaleTimeString() + "  " + event.type + "  " + event.value;
          list.prepend(item);
          while (list.children.length > 50) list.lastChild.remove();
        }

        function listen() {
          const source = new EventSource(withToken("/api/events"));
          source.onopen = () => { $("state").textContent = "connected"; call("GET", "/api/status").then(render).catch(() => {}); };
          source.onmessage = async (message) => {
            let event;
            try { event = JSON.parse(message.data); } catch { return; }
            switch (event.event) {
              case "photo-saved": await refreshGallery(); showLastPhoto(event.location || ""); break;
              case "recording-started": setRecording(true, 0); break;
              case "recording-finished": setRecording(false, 0); await refreshGallery(); break;
              case "code-detected": addCode(event); break;
              case "action-failed": showError(event.action + ": " + event.message); break;
              case "session-started": case "session-stopped": case "configuration-committed": case "interrupted":
                call("GET", "/api/status").then(render).catch(() => {}); break;
            }
          };
        }

        $("shutter").onclick = () => call("POST", "/api/photo").catch(() => {});
        $("record").onclick = () => call("POST", $("record").classList.contains("recording") ? "/api/recording/stop" : "/api/recording/start").catch(() => {});
        $("mode-photo").onclick = () => call("POST", "/api/mode", { mode: "photo" }).catch(() => {});
        $("mode-video").onclick = () => call("POST", "/api/mode", { mode: "video" }).catch(() => {});
        $("flash").onclick = () => call("POST", "/api/flash").catch(() => {});
        $("torch").onclick = () => call("POST", "/api/torch", {}).catch(() => {});
        $("camera").onclick = () => call("POST", "/api/camera").catch(() => {});
        $("session").onclick = () => call("POST", $("session").textContent === "Stop" ? "/api/session/stop" : "/api/session/start").catch(() => {});
        window.addEventListener("pagehide", stopWebRTC);

        (async () => {
          let status = {};
          try { status = await call("GET", "/api/status"); render(status); } catch (error) { return; }
          listen();
          refreshGallery().catch(() => {});
          const wantMJPEG = params.get("mjpeg") === "1" || !window.RTCPeerConnection || !status.webrtc;
          if (wantMJPEG) {
            startMJPEG().catch((error) => showError("preview: " + error.message));
          } else {
            startWebRTC().catch((error) => fallbackToMJPEG(error.message));
          }
        })();
        </script>
        </body>
        </html>
        """#
}
