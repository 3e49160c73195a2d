# The two commands of the README: `make run` and `make test`. Both install what is missing first.
SWIFT ?= swift
RELEASE_BIN := .build/release/capture
DEBUG_BIN := .build/debug/capture
PIPELINE ?= Pipelines/default.pipeline
# `make run` writes into OUTPUT_DIR whatever RUN_ARGS says (RUN_ARGS="--output-dir DIR" still wins: the last one counts).
OUTPUT_DIR ?= out
RUN_ARGS ?=

.PHONY: install uninstall deb docs check-docs test-docs lint format tsan soak soak-recording run test test-host test-swift test-browser test-desktop test-examples test-pipelines test-cli test-leaks test-hardware bench-hardware build build-debug install-deps bench clean

install-deps:
	@bash scripts/install-deps.sh

# The CLI, and next to it the developer executable `capture bench` and `capture soak` hand over to
# (capture-dev: the benchmarks, the soak runs and the fuzzer; never installed or packaged).
build: install-deps
	$(TIMED) release $(SWIFT) build -c release --product capture
	$(TIMED) release-dev $(SWIFT) build -c release --product capture-dev

# The debug build also writes the symbol graphs DocC and the doc-comment check read (.build/symbol-graphs).
SYMBOL_GRAPHS := -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(CURDIR)/.build/symbol-graphs
build-debug: install-deps
	@mkdir -p .build/symbol-graphs
	$(TIMED) debug $(SWIFT) build --build-tests $(SYMBOL_GRAPHS)

# Runs the default pipeline on the first camera, or the test pattern when there is none (its
# fallback=test-pattern, said on stderr). Files go to OUTPUT_DIR (./out).
run: build
	$(RELEASE_BIN) run $(PIPELINE) --output-dir $(OUTPUT_DIR) $(RUN_ARGS)

# Every test: the Swift suites, the CLI end to end, the examples, every .pipeline under Pipelines/, a leak check,
# then the real-V4L2 tier in a VM. Each part's time is printed at the end (.build/test-times.txt), also
# when one failed.
TIMED := bash scripts/timed.sh
test:
	@mkdir -p .build && rm -f .build/test-times.txt
	@$(MAKE) --no-print-directory test-host test-hardware; status=$$?; \
	  echo "make test: the parts' times"; cat .build/test-times.txt 2>/dev/null; exit $$status

# Everything that runs on this machine without a VM: formatting, the API reference (the doc-comment
# check, DocC, the pages in headless Chromium), then the suites and the end-to-end checks.
test-host: lint build-debug build test-docs test-swift test-browser test-desktop test-examples test-pipelines test-leaks

# The suites in lanes: whole suites side by side in a few processes, each suite's tests one at a time
# (scripts/test-swift.py; CAPTURE_TEST_LANES, CAPTURE_TEST_FILTER).
test-swift:
	CAPTURE_BIN=$(CURDIR)/$(RELEASE_BIN) $(TIMED) swift /usr/bin/python3 scripts/test-swift.py

# Every program under examples/, on the virtual devices, its output checked with identify/ffprobe.
test-examples:
	$(TIMED) examples bash scripts/run-examples.sh .build/debug

# The web app of `capture serve` in headless Chromium (Selenium): preview plays and moves, shutter,
# mode switch without blackout, a recording downloaded and read by ffprobe.
test-browser:
	$(TIMED) browser /usr/bin/python3 scripts/test-browser.py $(RELEASE_BIN)

# Desktop previews under a real X server of their own (Xvfb), read back with ImageMagick: the preview in
# an application's X11 window and in a GTK 4 window, each gravity checked by the window's pixels; then
# the GTK 4 camera app driven by real key and pointer events (xdotool), its screens checked by pixels
# and its files by identify and ffprobe.
test-desktop:
	$(TIMED) desktop /usr/bin/python3 scripts/test-window-preview.py .build/debug
	$(TIMED) wayland /usr/bin/python3 scripts/test-wayland-preview.py .build/debug
	$(TIMED) camera-app /usr/bin/python3 scripts/test-camera-app.py .build/debug/camera-app

test-pipelines:
	$(TIMED) pipelines bash scripts/run-pipelines.sh $(RELEASE_BIN)

test-leaks:
	$(TIMED) leaks bash scripts/check-leaks.sh $(RELEASE_BIN)

# The benchmarks on vivid (`capture bench` against camerabin and a rebuild, direct and through PipeWire)
# measure; they check nothing a test must: `make bench-hardware` runs them in the same VM.
HARDWARE_BENCHMARKS := capture bench
test-hardware: build
	CAPTURE_HARDWARE_SKIP='$(HARDWARE_BENCHMARKS)' $(TIMED) hardware bash scripts/test-hardware.sh $(RELEASE_BIN)

bench-hardware: build
	CAPTURE_HARDWARE_ONLY='$(HARDWARE_BENCHMARKS)' bash scripts/test-hardware.sh $(RELEASE_BIN)

# `capture bench` runs in capture-dev, which `build` puts next to the CLI.
bench: build
	$(SWIFT) build -c release --product gtk-preview
	$(SWIFT) build -c release --product window-preview
	$(RELEASE_BIN) bench

# The long run (not part of `make test`; about half an hour): 1,000 still -> video -> still cycles on one
# session, each recording with a camera switch, memory, descriptors and threads watched, every movie
# decoded; drawn when matplotlib is there.
# MALLOC_ARENA_MAX=2: glibc gives each new thread an arena of its own, and every branch brings new
# streaming threads, so without it resident memory climbs in steps that are the allocator's, not leaks
# (docs/benchmarks.md, "Soak").
# Then a million generated and mutated inputs for the .pipeline reader, every command's options and the
# location check (`capture soak --fuzz`; about a minute). `capture soak` runs in capture-dev, which
# `build` puts next to the CLI.
SOAK_CYCLES ?= 1000
SOAK_FUZZ ?= 1000000
soak: build
	MALLOC_ARENA_MAX=2 $(RELEASE_BIN) soak --cycles $(SOAK_CYCLES) --output-dir .build/soak --json .build/soak-report.json
	-/usr/bin/python3 scripts/plot-soak.py .build/soak-report.json .build/soak.png && echo "soak: drawn in .build/soak.png"
	$(RELEASE_BIN) soak --fuzz $(SOAK_FUZZ) --seeds Pipelines --output-dir .build/soak

# One hour of 720p30 recording (test pattern + test tone) with a barcode branch and a photo every 10 s:
# frames lost, A/V drift, memory; the file is measured with ffprobe and decoded (`capture soak --recording`).
SOAK_RECORDING ?= 3600
soak-recording: build
	MALLOC_ARENA_MAX=2 $(RELEASE_BIN) soak --recording $(SOAK_RECORDING) --output-dir .build/soak-recording --json .build/soak-recording-report.json

# ThreadSanitizer (not part of `make test`; its tests take about 3 minutes on 2 cores, after the builds):
# the Swift suites built with --sanitize=thread in .build/tsan and run one test at a time with
# scripts/tsan.supp; fails on any report or a crash, lists failed tests (docs/architecture.md,
# "ThreadSanitizer"). The CLI suites run the release CLI, unsanitized.
tsan: build
	SWIFT=$(SWIFT) bash scripts/tsan.sh $(RELEASE_BIN)

clean:
	rm -rf .build

# Installing like a Linux tool: the binary, `man capture`, bash/zsh/fish completions, the example
# .pipeline files under share/capture and the docs (scripts/install.sh). The list of what was installed
# is kept in share/capture/installed-files, which `make uninstall` removes.
PREFIX ?= /usr/local
DESTDIR ?=
install: build
	bash scripts/install.sh $(RELEASE_BIN) $(PREFIX) $(DESTDIR) > .build/installed-files
	install -D -m 0644 .build/installed-files $(DESTDIR)$(PREFIX)/share/capture/installed-files
	@echo "install: $$(wc -l < .build/installed-files) files under $(DESTDIR)$(PREFIX)"

uninstall:
	@test -f $(DESTDIR)$(PREFIX)/share/capture/installed-files || { echo "uninstall: nothing installed under $(DESTDIR)$(PREFIX)"; exit 1; }
	while IFS= read -r file; do rm -f "$(DESTDIR)$$file"; done < $(DESTDIR)$(PREFIX)/share/capture/installed-files
	rm -f $(DESTDIR)$(PREFIX)/share/capture/installed-files
	-find $(DESTDIR)$(PREFIX)/share/capture $(DESTDIR)$(PREFIX)/share/doc/capture -depth -type d -empty -delete

# The Debian package: a release build with the Swift runtime linked in, staged under /usr, its
# dependencies the runtime packages scripts/install-deps.sh names (checked against the libraries the
# binary links). `scripts/check-deb.sh` (as root) installs it in a clean Debian 12 root.
deb: install-deps
	bash scripts/make-deb.sh

# The documents against the code (Tests/PipelineFileTests/DocumentationTests.swift, CLIDocumentationTests):
# every statement, key, event and error name of the .pipeline vocabulary in docs/pipeline-format.md,
# every CLI command and option in docs/cli.md, no sentence calling a statement missing that exists.
DOC_TESTS := .build/debug/CapturePackageTests.xctest --testing-library swift-testing \
	--filter 'DocumentationTests|VocabularyDocumentationTests|CLIDocumentationTests'
# The API reference (DocC, the toolchain's own docc) in .build/docs; `check-docs` fails when a public
# symbol has no doc comment; `test-docs` also opens the rendered pages in headless Chromium.
docs: build-debug
	SWIFT=$(SWIFT) $(TIMED) docs bash scripts/make-docs.sh

check-docs: build-debug
	SWIFT=$(SWIFT) bash scripts/make-docs.sh --check
	$(DOC_TESTS)

test-docs: docs
	$(TIMED) docs-words $(DOC_TESTS)
	$(TIMED) docs-page /usr/bin/python3 scripts/check-docs-browser.py .build/docs

# Formatting with the toolchain's swift-format and the committed .swift-format: `format` rewrites,
# `lint` fails on code that is not formatted.
FORMATTED := Package.swift Sources Tests examples
format:
	swift-format format --in-place --recursive --parallel $(FORMATTED)

lint:
	swift-format lint --strict --recursive --parallel $(FORMATTED)
