#!/usr/bin/env bash
# papayu's main job, end to end: build papayu, then ask a model to fix the broken calculator in a
# COPY of examples/sample-project and apply the change transactionally (plan → validate → preview
# → apply → checks), with a trace and a report.
#
# The model is the one you configured (PAPAYU_LLM_API_URL + PAPAYU_LLM_MODEL, see `papayu doctor`);
# when none is configured, the real local model: scripts/local-llm.sh installs llama-cpp-python and
# SmolLM2-135M under ~/.cache/papayu (the first time compiles llama.cpp, 10–15 min) and this script
# serves it on a free 127.0.0.1 port for the duration of the run.
#
#   scripts/demo.sh ["goal text"]
# Exit status: papayu's (0 applied, 3 plan rejected, 4 apply rejected/rolled back; both leave the
# project unchanged). A 135M model rarely writes a valid plan: watching papayu reject it safely is
# part of the demo.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
goal=${1:-"fix: add() in calc.py subtracts instead of adding, so test_calc.py fails"}

cargo build --release --quiet --package papayu-cli --manifest-path "$root/Cargo.toml"
papayu=$root/target/release/papayu

work=$(mktemp -d)
cp -r "$root/examples/sample-project" "$work/"
project=$work/sample-project
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; true; }
trap cleanup EXIT

if [ -z "${PAPAYU_LLM_API_URL:-}" ]; then
  echo "demo: no provider configured; starting the local model (scripts/local-llm.sh)" >&2
  "$root/scripts/local-llm.sh" setup >/dev/null
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$root/scripts/local-llm.sh" serve "$port" >"$work/llm-server.log" 2>&1 &
  server=$!
  for _ in $(seq 1 120); do
    curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
    kill -0 "$server" 2>/dev/null || { cat "$work/llm-server.log" >&2; exit 1; }
    sleep 1
  done
  export PAPAYU_LLM_API_URL=http://127.0.0.1:$port/v1
  export PAPAYU_LLM_MODEL=${PAPAYU_LLM_MODEL:-smollm2}
  export PAPAYU_LLM_STRICT_JSON=${PAPAYU_LLM_STRICT_JSON:-1}
  export PAPAYU_LLM_MAX_TOKENS=${PAPAYU_LLM_MAX_TOKENS:-1024}
fi
export PAPAYU_TRACE=1 XDG_CONFIG_HOME=${XDG_CONFIG_HOME:-$work/config}

echo "demo: project copy at $project" >&2
status=0
"$papayu" --project "$project" run --yes "$goal" || status=$?

echo
echo "== changes on disk (diff against examples/sample-project):"
diff -ru --exclude=.papa-yu "$root/examples/sample-project" "$project" || true
echo "== traces:"
"$papayu" --project "$project" trace list
echo "== report:"
"$papayu" --project "$project" report
echo "demo: papayu exited with $status (project copy kept at $project)"
exit "$status"
