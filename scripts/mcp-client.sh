#!/usr/bin/env bash
# The official Python MCP SDK (PyPI `mcp`), the real MCP client papayu's `papayu mcp` end-to-end
# test drives the server with (crates/papayu-cli/tests/mcp.rs).
#
#   scripts/mcp-client.sh setup     install the venv (idempotent), print its python
#   scripts/mcp-client.sh python    print the venv's python (fails when not installed)
#
# The venv lives beside scripts/local-llm.sh's: ${XDG_CACHE_HOME:-~/.cache}/papayu/mcp-venv.
# The version is pinned; changing it here rebuilds the venv on the next setup.
set -euo pipefail

MCP_VERSION=2.3.0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/papayu
venv=$cache/mcp-venv
py=$venv/bin/python
stamp=$venv/.papayu-mcp

installed() {
  [ -x "$py" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$MCP_VERSION" ] &&
    "$py" -c "import mcp.client.stdio" >/dev/null 2>&1
}

case "${1:-setup}" in
  setup)
    if ! installed; then
      echo "mcp-client: installing mcp==$MCP_VERSION into $venv" >&2
      rm -rf "$venv"
      mkdir -p "$cache"
      python3 -m venv "$venv"
      "$py" -m pip install --quiet --upgrade pip >&2
      "$py" -m pip install --quiet "mcp==$MCP_VERSION" >&2
      echo "$MCP_VERSION" >"$stamp"
    fi
    echo "$py"
    ;;
  python)
    installed || { echo "mcp-client: not installed; run scripts/mcp-client.sh setup" >&2; exit 1; }
    echo "$py"
    ;;
  *)
    echo "usage: $0 setup|python" >&2
    exit 2
    ;;
esac
