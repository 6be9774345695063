"""Drive `papayu mcp` with the official Python MCP SDK (PyPI `mcp`), a real MCP client.

Run by crates/papayu-cli/tests/mcp.rs as `python mcp_client.py PAPAYU PROJECT SCENARIO`; every
check is an assert, and the last line printed is `MCP-E2E <scenario> OK`. Scenarios:

  session     initialize, tools/list, read_file, preview, apply, rejected applies (the tree
              byte-for-byte unchanged), deletes without confirmation, malformed arguments,
              undo, history and its resource.
  read-only   `--read-only`: only the tools that write nothing, a writing call refused.
  recovered   a fresh session on a project whose earlier server was killed mid-apply: the
              file is as it was before that apply, and the apply can be sent again.
"""

import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

PAPAYU, PROJECT, SCENARIO = sys.argv[1], Path(sys.argv[2]), sys.argv[3]

READING_TOOLS = {"validate_plan", "preview_plan", "history", "read_file", "search", "context"}
WRITING_TOOLS = {"apply_plan", "apply_patch", "undo", "redo"}


def tree(root: Path) -> dict[str, bytes]:
    """Every file under the project except papayu's own state, path → bytes."""
    files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".papa-yu/"):
            files[rel] = path.read_bytes()
    return files


def server(*extra: str) -> StdioServerParameters:
    # No provider and no cached model in a scratch cache: plan_goal/run_goal are not offered.
    scratch = os.environ["MCP_E2E_SCRATCH"]
    return StdioServerParameters(
        command=PAPAYU,
        args=["mcp", "--project", str(PROJECT), *extra],
        env={"XDG_CACHE_HOME": f"{scratch}/cache", "XDG_CONFIG_HOME": f"{scratch}/config"},
    )


def result(r) -> dict:
    """The structured result of a tool call, checked against its text block."""
    assert r.structured_content is not None, r
    assert json.loads(r.content[0].text) == r.structured_content, r
    return r.structured_content


async def expect_invalid_params(session: ClientSession, name: str, arguments) -> str:
    before = tree(PROJECT)
    try:
        r = await session.call_tool(name, arguments)
    except MCPError as e:
        assert e.code == -32602, (name, arguments, e.code, e.message)
        assert tree(PROJECT) == before, f"{name} wrote after a malformed call"
        return e.message
    raise AssertionError(f"{name}({arguments}) answered {r}, not a JSON-RPC error")


async def rejected(session: ClientSession, name: str, arguments: dict, *codes: str) -> dict:
    """A refusal carrying one of `codes`, the project byte-for-byte as before."""
    before = tree(PROJECT)
    r = await session.call_tool(name, arguments)
    assert r.is_error, (name, r)
    body = result(r)
    assert body["ok"] is False and body["code"] in codes, body
    assert tree(PROJECT) == before, f"{name} rejected with {body['code']} but changed the project"
    return body


async def session_scenario(session: ClientSession) -> None:
    init = await session.initialize()
    assert init.server_info.name == "papayu", init
    assert init.capabilities.tools is not None and init.capabilities.resources is not None
    assert "base_sha256" in (init.instructions or "")

    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == READING_TOOLS | WRITING_TOOLS, sorted(tools)
    for t in tools.values():
        assert t.input_schema["type"] == "object" and t.description, t
    assert "confirm_deletes" in tools["apply_plan"].input_schema["properties"]
    assert tools["read_file"].annotations.read_only_hint is True

    original = (PROJECT / "src/app.py").read_bytes()
    read = result(await session.call_tool("read_file", {"path": "src/app.py"}))
    assert read["content"].encode() == original
    base = read["sha256"]
    assert base == hashlib.sha256(original).hexdigest()

    plan = {
        "summary": "greet louder and add a note",
        "actions": [
            {
                "kind": "EDIT_FILE",
                "path": "src/app.py",
                "base_sha256": base,
                "edits": [
                    {"op": "replace", "anchor": "def greet", "before": "hello", "after": "HELLO"}
                ],
            },
            {"kind": "CREATE_FILE", "path": "docs/note.md", "content": "# Note\n"},
        ],
    }

    before = tree(PROJECT)
    preview = result(await session.call_tool("preview_plan", {"plan": plan}))
    assert preview["would_apply"] is True and preview["blocked"] == [], preview
    diffs = "".join(f.get("diff") or "" for f in preview["files"])
    assert "+    return 'HELLO ' + name" in diffs, diffs
    assert tree(PROJECT) == before, "preview_plan wrote"

    valid = result(await session.call_tool("validate_plan", {"plan": json.dumps(plan)}))
    assert valid["valid"] is True, valid

    applied = result(await session.call_tool("apply_plan", {"plan": plan}))
    assert applied["ok"] is True and isinstance(applied["tx_id"], str), applied
    assert b"HELLO" in (PROJECT / "src/app.py").read_bytes()
    assert (PROJECT / "docs/note.md").read_bytes() == b"# Note\n"

    # A stale base hash: nothing written, not even the CREATE_FILE beside it.
    stale = {
        "summary": "too late",
        "actions": [
            {"kind": "CREATE_FILE", "path": "new.txt", "content": "x\n"},
            {
                "kind": "EDIT_FILE",
                "path": "src/app.py",
                "base_sha256": base,
                "edits": [{"op": "replace", "anchor": "def greet", "before": "HELLO", "after": "hi"}],
            },
        ],
    }
    await rejected(session, "apply_plan", {"plan": stale}, "ERR_EDIT_BASE_MISMATCH")

    # A failing check after the writes: everything rolled back.
    now = result(await session.call_tool("read_file", {"path": "src/app.py"}))["sha256"]
    checked = {
        "summary": "break it",
        "actions": [
            {"kind": "CREATE_FILE", "path": "other.txt", "content": "y\n"},
            {
                "kind": "EDIT_FILE",
                "path": "src/app.py",
                "base_sha256": now,
                "edits": [{"op": "replace", "anchor": "def greet", "before": "HELLO", "after": "bye"}],
            },
        ],
    }
    body = await rejected(
        session, "apply_plan", {"plan": checked, "checks": {"commands": ["exit 3"]}}, "ERR_CHECK_FAILED"
    )
    assert body["stage"] == "apply", body

    # A rule broken (a protected path): every violation, nothing written.
    body = await rejected(
        session,
        "apply_plan",
        {"plan": {"summary": "s", "actions": [{"kind": "CREATE_FILE", "path": ".env", "content": "K=1\n"}]}},
        "ERR_PROTECTED_PATH",
    )
    assert body["violations"], body

    # Deletes need confirm_deletes.
    delete = {"summary": "drop the note", "actions": [{"kind": "DELETE_FILE", "path": "docs/note.md"}]}
    body = await rejected(session, "apply_plan", {"plan": delete}, "ERR_CANCELLED")
    assert body["deletes"] == ["docs/note.md"], body

    # Reads outside the root are refused with a code.
    await rejected(
        session, "read_file", {"path": "../outside.txt"}, "ERR_PATH_ESCAPES_ROOT", "ERR_INVALID_PATH"
    )

    # Malformed calls: JSON-RPC errors, nothing written, the server still answers.
    await expect_invalid_params(session, "apply_plan", {"plan": 42})
    await expect_invalid_params(session, "apply_plan", {})
    await expect_invalid_params(session, "apply_plan", {"plan": plan, "confirm_deletes": "yes"})
    await expect_invalid_params(session, "apply_plan", {"plan": plan, "bogus": 1})
    await expect_invalid_params(session, "apply_plan", {"plan": plan, "protocol": 1})
    await expect_invalid_params(session, "read_file", {"path": 7})
    await expect_invalid_params(session, "apply_patch", {"path": "src/app.py", "base_sha256": now})
    message = await expect_invalid_params(session, "no_such_tool", {})
    assert "no_such_tool" in message, message

    history = result(await session.call_tool("history", {}))
    assert [e["tx_id"] for e in history["undo"]] == [applied["tx_id"]], history
    resources = {r.uri for r in (await session.list_resources()).resources}
    assert {"papayu://history", "papayu://traces"} <= resources, resources
    contents = (await session.read_resource("papayu://history")).contents
    assert json.loads(contents[0].text)["undo"][0]["tx_id"] == applied["tx_id"]

    undone = result(await session.call_tool("undo", {}))
    assert undone["ok"] is True, undone
    assert (PROJECT / "src/app.py").read_bytes() == original
    assert not (PROJECT / "docs/note.md").exists()
    await rejected(session, "undo", {}, "ERR_NOTHING_TO_UNDO")

    # The server is still healthy after all of it.
    assert result(await session.call_tool("read_file", {"path": "src/app.py"}))["sha256"] == base


async def read_only_scenario(session: ClientSession) -> None:
    await session.initialize()
    tools = {t.name for t in (await session.list_tools()).tools}
    assert tools == READING_TOOLS, sorted(tools)
    message = await expect_invalid_params(session, "apply_plan", {"plan": {"actions": []}})
    assert "read-only" in message, message
    base = result(await session.call_tool("read_file", {"path": "src/app.py"}))["sha256"]
    preview = result(
        await session.call_tool(
            "preview_plan",
            {"plan": {"summary": "s", "actions": [{"kind": "CREATE_FILE", "path": "n.txt", "content": "n\n"}]}},
        )
    )
    assert preview["would_apply"] is True, preview
    assert base == hashlib.sha256((PROJECT / "src/app.py").read_bytes()).hexdigest()


async def recovered_scenario(session: ClientSession) -> None:
    await session.initialize()
    expected = os.environ["MCP_E2E_EXPECT_SHA256"]
    read = result(await session.call_tool("read_file", {"path": "src/app.py"}))
    assert read["sha256"] == expected, "the interrupted apply was not rolled back"
    history = result(await session.call_tool("history", {}))
    assert history["undo"] == [], history
    plan = {
        "summary": "again",
        "actions": [
            {
                "kind": "EDIT_FILE",
                "path": "src/app.py",
                "base_sha256": read["sha256"],
                "edits": [{"op": "replace", "anchor": "def greet", "before": "hello", "after": "HELLO"}],
            }
        ],
    }
    applied = result(await session.call_tool("apply_plan", {"plan": plan}))
    assert applied["ok"] is True, applied


SCENARIOS = {
    "session": ((), session_scenario),
    "read-only": (("--read-only",), read_only_scenario),
    "recovered": ((), recovered_scenario),
}


async def main() -> None:
    extra, scenario = SCENARIOS[SCENARIO]
    async with stdio_client(server(*extra)) as (read, write):
        async with ClientSession(read, write) as session:
            await scenario(session)
    print(f"MCP-E2E {SCENARIO} OK", flush=True)


asyncio.run(main())
