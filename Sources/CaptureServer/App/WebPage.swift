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
          .sheet { position: fixed; inset: 0; background: #000c; display: flex; align-items: flex-start; justify-content: center; overflow: auto; z-index: 10; }
          .sheet > div { background: #1c1c1c; margin: 2rem 1rem; padding: 1rem; border-radius: .5rem; max-width: 60rem; width: 100%; }
          .sheet h2 { margin-top: 0; font-size: 1.1rem; }
          #picker-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: .5rem; margin: .75rem 0; }
          #picker-grid figure { margin: 0; cursor: pointer; background: #111; padding: .3rem; border-radius: .3rem; }
          #picker-grid figure:hover { outline: 2px solid #2a5db0; }
          #picker-grid img { width: 100%; aspect-ratio: 4 / 3; object-fit: cover; background: #000; display: block; }
          #picker-grid figcaption, .caption { font-size: .75rem; overflow-wrap: anywhere; }
          #picked-photo, #picked-video, #trim-video { max-width: 100%; max-height: 60vh; display: block; }
          #crop-stage { position: relative; display: inline-block; touch-action: none; user-select: none; cursor: crosshair; }
          #crop-image { max-width: 100%; max-height: 60vh; display: block; pointer-events: none; }
          #crop-box { position: absolute; border: 2px solid #fff; box-shadow: 0 0 0 9999px #0008; pointer-events: none; }
          .numbers { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; margin: .5rem 0; }
          .numbers input[type=number] { width: 5.5rem; background: #222; color: #eee; border: 1px solid #555; padding: .3rem; }
          .pair { display: flex; gap: 1rem; flex-wrap: wrap; }
          .pair figure { margin: 0; flex: 1 1 14rem; }
          .pair img { max-width: 100%; display: block; background: #000; }
          select { background: #333; color: #eee; border: 1px solid #555; padding: .4rem; }
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
            <button id="album-open" title="pick a photo or video of this session">Album</button>
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
              <label><input type="checkbox" id="edit-after-shot"> Crop after the shot</label>
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
        <div id="picker" class="sheet hidden" role="dialog" aria-label="album">
          <div>
            <h2>Album</h2>
            <div class="numbers">
              <select id="picker-kind"><option value="all">Photos and videos</option><option value="photo">Photos</option><option value="video">Videos</option></select>
              <select id="picker-order"><option value="newest">Newest first</option><option value="name">By name</option></select>
              <button id="picker-cancel">Cancel</button>
            </div>
            <div id="picker-grid"></div>
          </div>
        </div>
        <div id="viewer-sheet" class="sheet hidden" role="dialog" aria-label="picked item">
          <div>
            <h2 id="picked-name"></h2>
            <img id="picked-photo" class="hidden" alt="picked photo">
            <video id="picked-video" class="hidden" controls preload="metadata"></video>
            <div class="numbers">
              <button id="crop-open" class="hidden">Crop…</button>
              <button id="trim-open" class="hidden">Trim…</button>
              <span id="thumb-controls" class="numbers hidden">
                <label>Thumbnail at <input type="number" id="thumb-time" min="0" step="0.01" value="0"> s</label>
                <button id="thumb-now" title="the player's current time">Player's time</button>
                <button id="thumb-make">Make thumbnail</button>
              </span>
              <button id="viewer-close">Close</button>
            </div>
            <figure id="thumb-figure" class="hidden"><img id="thumb-result" alt="thumbnail"><figcaption id="thumb-caption" class="caption"></figcaption></figure>
          </div>
        </div>
        <div id="crop-sheet" class="sheet hidden" role="dialog" aria-label="crop">
          <div>
            <h2>Crop <span id="crop-source"></span></h2>
            <div id="crop-stage"><img id="crop-image" alt="photo to crop"><div id="crop-box"></div></div>
            <div class="numbers">
              <label>x <input type="number" id="crop-x" min="0" max="100" step="0.1"> %</label>
              <label>y <input type="number" id="crop-y" min="0" max="100" step="0.1"> %</label>
              <label>width <input type="number" id="crop-w" min="1" max="100" step="0.1"> %</label>
              <label>height <input type="number" id="crop-h" min="1" max="100" step="0.1"> %</label>
              <button id="crop-save">Use</button>
              <button id="crop-cancel">Cancel</button>
            </div>
            <div id="crop-result" class="pair hidden">
              <figure><img id="crop-original" alt="original"><figcaption id="crop-original-caption" class="caption"></figcaption></figure>
              <figure><img id="crop-edited" alt="edited"><figcaption id="crop-edited-caption" class="caption"></figcaption></figure>
            </div>
          </div>
        </div>
        <div id="trim-sheet" class="sheet hidden" role="dialog" aria-label="trim">
          <div>
            <h2>Trim <span id="trim-source"></span></h2>
            <video id="trim-video" controls preload="metadata"></video>
            <div class="numbers">
              <label>Start <input type="range" id="trim-start-range" min="0" step="0.001"> <input type="number" id="trim-start" min="0" step="0.001"> s</label>
              <label>End <input type="range" id="trim-end-range" min="0" step="0.001"> <input type="number" id="trim-end" min="0" step="0.001"> s</label>
              <label><input type="checkbox" id="trim-keyframe"> At keyframes (faster, not frame-exact)</label>
            </div>
            <div class="pair">
              <figure><img id="trim-start-frame" alt="first frame"><figcaption id="trim-start-caption" class="caption">first frame</figcaption></figure>
              <figure><img id="trim-end-frame" alt="last frame"><figcaption id="trim-end-caption" class="caption">last frame</figcaption></figure>
            </div>
            <div class="numbers">
              <button id="trim-save">Save</button>
              <button id="trim-cancel">Cancel</button>
              <span id="trim-result" class="caption"></span>
            </div>
          </div>
        </div>
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

        // A grid's figure for an item: its name and kind in data attributes (what the tests read).
        function itemFigure(item, className) {
          const figure = document.createElement("figure");
          figure.className = className;
          figure.dataset.name = item.name;
          figure.dataset.kind = item.kind;
          return figure;
        }
        async function refreshGallery() {
          const answer = await call("GET", "/api/media?limit=60");
          const gallery = $("gallery");
          gallery.replaceChildren();
          for (const item of answer.items) {
            const figure = itemFigure(item, "item");
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

        // --- Camera roll: the picker, the viewer, the crop step, the trim editor, thumbnails ---------------
        // Every name comes from the server's lists and goes back as a JSON string or a query value; the
        // server confines it. Cancel closes a sheet without a request: nothing is written.
        const query = (values) => Object.entries(values).map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v)).join("&");
        const frameURL = (source, time, size) => withToken("/api/frame?" + query({ source, time: time.toFixed(3), size: size || 160 }));
        function show(id, on) { $(id).classList.toggle("hidden", !on); }
        let picked = null;

        let pickerRequests = 0;
        async function openPicker() {
          show("picker", true);
          const asked = ++pickerRequests;
          const answer = await call("GET", "/api/picker?" + query({ kind: $("picker-kind").value, order: $("picker-order").value, limit: 60 }));
          if (asked !== pickerRequests) return;  // a later choice of kind or order answers
          const grid = $("picker-grid");
          grid.replaceChildren();
          for (const item of answer.items) {
            const figure = itemFigure(item, "pick");
            const image = document.createElement("img");
            image.alt = item.name;
            image.loading = "lazy";
            image.src = withToken("/api/picker/preview?" + query({ name: item.name, size: 240 }));
            const caption = document.createElement("figcaption");
            caption.textContent = (item.kind === "video" ? "▶ " : "") + item.name;
            figure.append(image, caption);
            figure.onclick = () => pick(item.name).catch(() => {});
            grid.append(figure);
          }
          grid.dataset.loaded = String(answer.items.length);
        }
        function closePicker() { show("picker", false); $("picker-grid").replaceChildren(); delete $("picker-grid").dataset.loaded; }

        async function pick(name) {
          const answer = await call("GET", "/api/picker/item?" + query({ name }));
          picked = answer.item;
          closePicker();
          openViewer(picked);
        }
        function openViewer(item) {
          $("picked-name").textContent = item.name + (item.width ? " · " + item.width + "×" + item.height : "")
            + (item.duration ? " · " + item.duration.toFixed(2) + " s" : "");
          const photo = item.kind === "photo";
          show("picked-photo", photo); show("picked-video", !photo);
          show("crop-open", photo); show("trim-open", !photo); show("thumb-controls", !photo);
          show("thumb-figure", false);
          if (photo) { $("picked-photo").src = withToken(item.url); $("picked-video").removeAttribute("src"); }
          else { $("picked-video").src = withToken(item.url); $("picked-photo").removeAttribute("src"); }
          $("viewer-sheet").dataset.name = item.name;
          $("viewer-sheet").dataset.kind = item.kind;
          show("viewer-sheet", true);
        }
        function closeViewer() { $("picked-video").pause(); show("viewer-sheet", false); delete $("viewer-sheet").dataset.name; }

        // The crop step: a rectangle dragged on the photo, or typed in per cent of it.
        const crop = { source: null, x: 10, y: 10, w: 80, h: 80 };
        function drawCrop() {
          const box = $("crop-box");
          box.style.left = crop.x + "%"; box.style.top = crop.y + "%"; box.style.width = crop.w + "%"; box.style.height = crop.h + "%";
          $("crop-x").value = crop.x.toFixed(1); $("crop-y").value = crop.y.toFixed(1);
          $("crop-w").value = crop.w.toFixed(1); $("crop-h").value = crop.h.toFixed(1);
        }
        function openCrop(item) {
          crop.source = item.name;
          Object.assign(crop, { x: 10, y: 10, w: 80, h: 80 });
          $("crop-source").textContent = item.name;
          $("crop-image").src = withToken(item.url);
          show("crop-result", false);
          show("crop-save", true);
          $("crop-cancel").textContent = "Cancel";
          $("crop-sheet").dataset.source = item.name;
          drawCrop();
          show("crop-sheet", true);
        }
        function closeCrop() { show("crop-sheet", false); delete $("crop-sheet").dataset.source; delete $("crop-result").dataset.edited; }
        function typedCrop() {
          const value = (id, low, high) => Math.min(high, Math.max(low, Number($(id).value) || 0));
          crop.x = value("crop-x", 0, 99); crop.y = value("crop-y", 0, 99);
          crop.w = value("crop-w", 1, 100 - crop.x); crop.h = value("crop-h", 1, 100 - crop.y);
          drawCrop();
        }
        let dragFrom = null;
        function stagePoint(event) {
          const rect = $("crop-stage").getBoundingClientRect();
          return { x: Math.min(100, Math.max(0, (event.clientX - rect.left) / rect.width * 100)),
                   y: Math.min(100, Math.max(0, (event.clientY - rect.top) / rect.height * 100)) };
        }
        $("crop-stage").addEventListener("pointerdown", (event) => {
          dragFrom = stagePoint(event);
          $("crop-stage").setPointerCapture(event.pointerId);
        });
        $("crop-stage").addEventListener("pointermove", (event) => {
          if (!dragFrom) return;
          const to = stagePoint(event);
          const w = Math.abs(to.x - dragFrom.x), h = Math.abs(to.y - dragFrom.y);
          if (w < 1 || h < 1) return;
          Object.assign(crop, { x: Math.min(to.x, dragFrom.x), y: Math.min(to.y, dragFrom.y), w, h });
          drawCrop();
        });
        $("crop-stage").addEventListener("pointerup", () => { dragFrom = null; });
        for (const id of ["crop-x", "crop-y", "crop-w", "crop-h"]) $(id).addEventListener("change", typedCrop);
        async function saveCrop() {
          const answer = await call("POST", "/api/crop", { source: crop.source,
            crop: { x: crop.x / 100, y: crop.y / 100, width: crop.w / 100, height: crop.h / 100 } });
          const describe = (item) => item.name + " · " + item.width + "×" + item.height;
          $("crop-original").src = withToken(answer.original.url);
          $("crop-edited").src = withToken(answer.edited.url);
          $("crop-original-caption").textContent = "original: " + describe(answer.original);
          $("crop-edited-caption").textContent = "edited: " + describe(answer.edited);
          $("crop-result").dataset.original = answer.original.name;
          $("crop-result").dataset.edited = answer.edited.name;
          show("crop-result", true);
          show("crop-save", false);
          $("crop-cancel").textContent = "Done";  // both files are there: closing keeps them
          $("crop-result").scrollIntoView({ block: "nearest" });
          refreshGallery().catch(() => {});
        }

        // The trim editor: a range, the frames at its ends, Save (frame-exact unless asked) or Cancel.
        const trim = { source: null, duration: 0, timer: null };
        function openTrim(item) {
          trim.source = item.name;
          trim.duration = item.duration || 0;
          $("trim-source").textContent = item.name;
          $("trim-video").src = withToken(item.url);
          for (const id of ["trim-start-range", "trim-end-range", "trim-start", "trim-end"]) $(id).max = trim.duration;
          setRange(0, trim.duration);
          $("trim-result").textContent = "";
          delete $("trim-sheet").dataset.result;
          $("trim-cancel").textContent = "Cancel";
          $("trim-sheet").dataset.source = item.name;
          show("trim-sheet", true);
        }
        function closeTrim() { $("trim-video").pause(); clearTimeout(trim.timer); show("trim-sheet", false); delete $("trim-sheet").dataset.source; }
        function setRange(start, end) {
          start = Math.max(0, Math.min(start, trim.duration)); end = Math.max(start, Math.min(end, trim.duration));
          $("trim-start").value = start; $("trim-start-range").value = start;
          $("trim-end").value = end; $("trim-end-range").value = end;
          clearTimeout(trim.timer);
          trim.timer = setTimeout(() => showEnds(start, end), 200);
        }
        function showEnds(start, end) {
          // The last frame shown is the one just before the end (the end itself is not in the copy).
          const last = Math.max(start, end - 0.001);
          for (const [id, time, label] of [["trim-start", start, "first frame"], ["trim-end", last, "last frame"]]) {
            const image = $(id + "-frame");
            delete image.dataset.time;
            image.onload = () => { image.dataset.time = time.toFixed(3); $(id + "-caption").textContent = label + " · " + time.toFixed(3) + " s"; };
            image.src = frameURL(trim.source, time, 240);
          }
        }
        for (const [id, which] of [["trim-start", 0], ["trim-start-range", 0], ["trim-end", 1], ["trim-end-range", 1]]) {
          $(id).addEventListener(id.endsWith("range") ? "input" : "change", () => {
            const value = Number($(id).value) || 0;
            if (which === 0) setRange(value, Number($("trim-end").value)); else setRange(Number($("trim-start").value), value);
            $("trim-video").currentTime = value;
          });
        }
        async function saveTrim() {
          const answer = await call("POST", "/api/trim", { source: trim.source, from: Number($("trim-start").value),
            to: Number($("trim-end").value), mode: $("trim-keyframe").checked ? "keyframe" : "exact" });
          $("trim-result").textContent = "saved " + answer.file.name + " (" + answer.duration.toFixed(3) + " s)";
          $("trim-sheet").dataset.result = answer.file.name;
          $("trim-cancel").textContent = "Done";
          refreshGallery().catch(() => {});
        }

        async function makeThumbnail() {
          const answer = await call("POST", "/api/thumbnail", { source: picked.name, time: Number($("thumb-time").value) || 0 });
          $("thumb-result").src = withToken(answer.file.url);
          $("thumb-caption").textContent = answer.file.name + " · " + answer.width + "×" + answer.height + " at " + answer.actualTime.toFixed(3) + " s";
          $("thumb-figure").dataset.name = answer.file.name;
          $("thumb-figure").dataset.actualTime = String(answer.actualTime);
          show("thumb-figure", true);
          refreshGallery().catch(() => {});
        }

        $("album-open").onclick = () => openPicker().catch(() => {});
        $("picker-kind").onchange = $("picker-order").onchange = () => openPicker().catch(() => {});
        $("picker-cancel").onclick = closePicker;
        $("viewer-close").onclick = closeViewer;
        $("crop-open").onclick = () => { closeViewer(); openCrop(picked); };
        $("trim-open").onclick = () => { closeViewer(); openTrim(picked); };
        $("crop-save").onclick = () => saveCrop().catch(() => {});
        $("crop-cancel").onclick = closeCrop;
        $("trim-save").onclick = () => saveTrim().catch(() => {});
        $("trim-cancel").onclick = closeTrim;
        $("thumb-now").onclick = () => { $("thumb-time").value = $("picked-video").currentTime.toFixed(2); };
        $("thumb-make").onclick = () => makeThumbnail().catch(() => {});
        document.addEventListener("keydown", (event) => {
          if (event.key !== "Escape") return;
          if (!$("crop-sheet").classList.contains("hidden")) closeCrop();
          else if (!$("trim-sheet").classList.contains("hidden")) closeTrim();
          else if (!$("viewer-sheet").classList.contains("hidden")) closeViewer();
          else closePicker();
        });

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

        // The shutter; with "Crop after the shot" the photo opens in the crop step (recipe 9-1's allowsEditing).
        $("shutter").onclick = () => call("POST", "/api/photo").then((answer) => {
          const photo = answer.photos && answer.photos[0];
          if (photo && $("edit-after-shot").checked) openCrop(photo);
        }).catch(() => {});
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
