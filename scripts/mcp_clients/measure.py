#!/usr/bin/env python3
"""Measure what Claude Code, Codex and Gemini CLI do with an MCP server's `instructions`:
run each client's own command line for one turn and read the request it sends its model.

    npm install --prefix /tmp/mcp-clients @anthropic-ai/claude-code @openai/codex \\
        @google/gemini-cli
    python3 dev.py setup
    python3 scripts/mcp_clients/measure.py --npm /tmp/mcp-clients --out /tmp/mcp-measure

Run it as root on Linux (it needs `ip netns`). It makes a network namespace that reaches
nothing but its own loopback (`--netns`, default `agentdocs-mcp`) and, inside it:

1. starts the demo (`python3 dev.py demo --port 8731`: this checkout's SQLite database,
   the demo data, the admin's API token it prints), and takes the `instructions` the demo
   project's `initialize` answers over HTTP (`/mcp/demo/website/`) and over stdio
   (`agentdocs mcp`), as the references;
2. starts `fake_model.py` (beside this file) on port 8732, which records every request
   and answers "ok";
3. runs each client once per MCP server (`claude -p`, `codex exec`, `gemini -p`, each
   with a HOME of its own under the output folder, so nothing of yours is read or
   changed): agentdocs over HTTP with the Bearer token (`http`), agentdocs over stdio
   (`stdio`), agentdocs over HTTP for the demo's `backend` project (`long`: the run
   first writes it an always-applied `.AGENTS/measure-long.md`, one version in the
   demo's database, for about 12,000 characters of instructions), and
   `probe_server.py` (`probe`), whose instructions (two lines, a second paragraph, filler past
   22,000 characters) show whether a client keeps the first line, the first paragraph or
   all, and where it cuts; Gemini CLI once more with the server `trust`ed (headless
   Gemini CLI offers an untrusted server's tools to no model), Codex once more with the
   stdio server `required` (Codex gives an optional server about a second to start,
   then sends the turn without it);
4. reads the first request of each run that carries the tools and writes, for each run,
   where the instructions' first line is (the JSON path, the message's role, the text
   before it), how much of the instructions follows it there, and the server's tools the
   model was offered or named, to `summary.json` and `summary.md` in the output folder
   (the records are kept there as `<client>-<server>.jsonl`); then stops what it
   started and deletes the namespace.

`--clients claude,codex` or `--servers http,probe` measure fewer. The output is printed
as a Markdown table too. Nothing here is imported by agentdocs; only the standard
library is used.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEMO_PORT = 8731
MODEL_PORT = 8732
TENANT, PROJECT = "demo", "website"
# The "long" runs read the demo's other project, given an always-applied document that
# makes its instructions about 12,000 characters (under agentdocs' 16 KiB budget).
LONG_PROJECT = "backend"
LONG_PATH = ".AGENTS/measure-long.md"
LONG_BODY = "# Long conventions\n\n" + "".join(
    f"- Rule {n:03d}: keep this rule; it is here to make the house rules longer than "
    "4,096 characters.\n"
    for n in range(1, 121)
)
PROMPT = "Say ok."
CLIENTS = ("claude", "codex", "gemini")
SERVERS = ("http", "http-trusted", "stdio", "stdio-required", "long", "probe")
# Variants measured with one client only: Gemini CLI's `trust`, Codex's `required`.
ONLY_FOR = {"http-trusted": "gemini", "stdio-required": "codex"}
# The session's process id, which the instructions name, differs from run to run.
PROCESS_ID = re.compile(r"this session's is '[^']*'")


# ---------------------------------------------------------------------------- outside


def outside(options: argparse.Namespace, argv: list[str]) -> int:
    """Make the namespace, run this script again inside it, delete the namespace."""
    if os.geteuid() != 0:
        raise SystemExit("measure.py: run as root (it makes a network namespace)")
    netns = options.netns
    subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", netns, "ip", "link", "set", "lo", "up"], check=True)
        inner = ["ip", "netns", "exec", netns, sys.executable, str(Path(__file__)), "--inside"]
        return subprocess.run([*inner, *argv], check=False).returncode
    finally:
        subprocess.run(["ip", "netns", "del", netns], check=False)


# ----------------------------------------------------------------------------- inside


def wait_for_port(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.5)
    raise SystemExit(f"measure.py: nothing answers on 127.0.0.1:{port}")


@contextlib.contextmanager
def started(command: list[str], log: Path, env: dict[str, str]) -> Iterator[subprocess.Popen]:
    """A server in a process group of its own, stopped (the whole group) on leaving."""
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def demo_token(log: Path, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        found = re.search(r"API token for admin: (\S+)", text)
        if found and "serving agentdocs" in text:
            return found.group(1)
        time.sleep(1)
    raise SystemExit(f"measure.py: the demo did not start; see {log}")


def api(token: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{DEMO_PORT}/api/v1/tenants/{TENANT}/projects/{path}",
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def ensure_long_document(token: str) -> None:
    """The long document in the long project, written once (again only if it differs)."""
    documents = f"{LONG_PROJECT}/documents/"
    status, current = api(token, "GET", documents + LONG_PATH)
    reason = "measure.py: instructions longer than 4,096 characters"
    if status == 404:
        status, answer = api(
            token, "POST", documents, {"path": LONG_PATH, "body": LONG_BODY, "reason": reason}
        )
    elif current.get("body") != LONG_BODY:
        change = {"body": LONG_BODY, "reason": reason, "version": current["version"]}
        status, answer = api(token, "PUT", documents + LONG_PATH, change)
    if status >= 300:
        raise SystemExit(f"measure.py: could not write {LONG_PATH}: {status} {answer}")


def http_instructions(token: str, project: str = PROJECT) -> str:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "measure.py", "version": "1"},
        },
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{DEMO_PORT}/mcp/{TENANT}/{project}/",
        data=json.dumps(initialize).encode(),
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)["result"]["instructions"]


def stdio_instructions(command: list[str], env: dict[str, str]) -> str:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "measure.py", "version": "1"},
        },
    }
    done = subprocess.run(
        command, input=json.dumps(initialize) + "\n", capture_output=True, text=True,
        env=env, timeout=60, check=False,
    )  # fmt: skip
    for line in done.stdout.splitlines():
        message = json.loads(line)
        if message.get("id") == 1:
            return message["result"]["instructions"]
    raise SystemExit(f"measure.py: {command[0]} gave no instructions: {done.stderr[-500:]}")


def server_spec(server: str, token: str, home: Path) -> dict[str, Any]:
    """The MCP server of one run: ``url`` and ``headers``, or ``command``, ``args``, ``env``."""
    if server in ("http", "http-trusted", "long"):
        project = LONG_PROJECT if server == "long" else PROJECT
        return {
            "url": f"http://127.0.0.1:{DEMO_PORT}/mcp/{TENANT}/{project}/",
            "headers": {"Authorization": f"Bearer {token}"},
        }
    if server in ("stdio", "stdio-required"):
        url = f"http://127.0.0.1:{DEMO_PORT}"
        return {
            "command": str(ROOT / ".venv" / "bin" / "agentdocs"),
            "args": ["mcp", "--url", url, "--tenant", TENANT, "--project", PROJECT],
            "env": {"AGENTDOCS_TOKEN": token, "AGENTDOCS_CACHE_DIR": str(home / "cache")},
        }
    return {"command": sys.executable, "args": [str(HERE / "probe_server.py")], "env": {}}


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


def client_run(
    client: str, server: str, spec: dict[str, Any], npm: Path, home: Path
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of one client's run, its settings written."""
    name = "probe" if server == "probe" else "agentdocs"
    node_dir = str(Path(shutil.which("node") or "/usr/bin/node").parent)
    env = {"PATH": f"{node_dir}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    binary = str(npm / "node_modules" / ".bin" / client)
    if client == "claude":
        entry = (
            {"type": "http", "url": spec["url"], "headers": spec["headers"]}
            if "url" in spec
            else {"type": "stdio", **spec}
        )
        config = home / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {name: entry}}, indent=2))
        env |= {
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{MODEL_PORT}",
            "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        command = [binary, "-p", PROMPT, "--mcp-config", str(config), "--strict-mcp-config"]
        return [*command, "--output-format", "json"], env
    if client == "codex":
        lines = [
            'model_provider = "fake"',
            "",
            "[model_providers.fake]",
            'name = "fake"',
            f'base_url = "http://127.0.0.1:{MODEL_PORT}/v1"',
            'env_key = "FAKE_MODEL_KEY"',
            'wire_api = "responses"',
            "",
            f"[mcp_servers.{name}]",
        ]
        if "url" in spec:
            lines += [f"url = {toml_string(spec['url'])}", 'bearer_token_env_var = "MCP_TOKEN"']
            env["MCP_TOKEN"] = spec["headers"]["Authorization"].removeprefix("Bearer ")
        else:
            lines += [
                f"command = {toml_string(spec['command'])}",
                "args = [" + ", ".join(toml_string(a) for a in spec["args"]) + "]",
                "env = {"
                + ", ".join(f"{k} = {toml_string(v)}" for k, v in spec["env"].items())
                + "}",
            ]
        if server == "stdio-required":
            lines.append("required = true")
        (home / ".codex").mkdir(parents=True, exist_ok=True)
        (home / ".codex" / "config.toml").write_text("\n".join(lines) + "\n")
        env |= {"CODEX_HOME": str(home / ".codex"), "FAKE_MODEL_KEY": "dummy"}
        return [binary, "exec", "--skip-git-repo-check", PROMPT], env
    entry = {"httpUrl": spec["url"], "headers": spec["headers"]} if "url" in spec else dict(spec)
    if server == "http-trusted":
        entry["trust"] = True
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "mcpServers": {name: entry},
    }
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2))
    env |= {
        "GEMINI_API_KEY": "dummy",
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{MODEL_PORT}",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    return [binary, "-p", PROMPT], env


# --------------------------------------------------------------------------- analysis


def strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a JSON value, with its path (``.input[1].content[2].text``)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, f"{path}[{index}]")
    elif isinstance(value, str):
        yield path, value


def at(value: Any, path: str) -> Any:
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        value = value[key] if key else value[int(index)]
    return value


def role_of(body: dict[str, Any], path: str) -> str:
    """The role of the message a string is in, or the top-level key it is under."""
    found = re.match(r"\.(messages|input|contents)\[(\d+)\]", path)
    if found:
        item = at(body, found.group(0))
        return f"{item.get('type', 'message')}, role {item.get('role', '?')}"
    return path.split(".")[1].split("[")[0]


def common_prefix(a: str, b: str) -> int:
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return size


def kept(instructions: str, received: str) -> tuple[str, str]:
    """What of ``instructions`` is in ``received`` (which starts with their first line),
    in words, and what ``received`` has where they stop matching."""
    total = len(instructions)
    size = common_prefix(instructions, received)
    then = received[size : size + 60]
    if size >= total:
        return f"whole ({total} characters)", then
    lines = instructions.split("\n")
    paragraph = instructions.split("\n\n")[0]
    if size <= len(lines[0]) + 1:
        return "first line only", then
    if len(paragraph) <= size <= len(paragraph) + 2:
        return "first paragraph only", then
    return f"the first {size} of {total} characters", then


def tool_lists(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The request's tool lists: its ``tools``, and Codex's ``additional_tools`` items
    (its newer models get their tools in ``input``)."""
    found = [body.get("tools") or []]
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            found.append(item.get("tools") or [])
    return [tools for tools in found if tools]


def main_request(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first request that carries tools: the turn's own, not a router's."""
    for record in records:
        body = record.get("body")
        if isinstance(body, dict) and tool_lists(body):
            return record
    return None


def tool_names(body: dict[str, Any]) -> list[str]:
    """Every tool's name; a namespace's tools as ``namespace.tool``."""
    names = []
    for tools in tool_lists(body):
        for tool in tools:
            if "functionDeclarations" in tool:
                names += [d["name"] for d in tool["functionDeclarations"]]
            elif tool.get("type") == "namespace":
                names += [f"{tool['name']}.{t.get('name')}" for t in tool.get("tools") or []]
            else:
                names.append(tool.get("name") or f"<{tool.get('type')}>")
    return names


def analyse(records: list[dict[str, Any]], instructions: str, name: str) -> dict[str, Any]:
    record = main_request(records)
    result: dict[str, Any] = {"requests": [f"{r['method']} {r['path']}" for r in records]}
    if record is None:
        return result | {"found": False, "kept": "no request with tools was recorded"}
    body = record["body"]
    expected = PROCESS_ID.sub("this session's is '…'", instructions.strip())
    first = expected.split("\n")[0]
    tools = tool_names(body)
    result |= {
        "path": record["path"],
        "tools": tools,
        "server_tools_offered": [t for t in tools if name in t],
        "server_tools_named": sorted(
            {
                m
                for _, text in strings(body)
                for m in re.findall(rf"\bmcp_{{1,2}}{name}(?:_{{1,2}}\w+)?", text)
            }
        ),
    }
    for path, text in strings(body):
        text = PROCESS_ID.sub("this session's is '…'", text)
        index = text.find(first)
        if index < 0:
            continue
        what, then = kept(expected, text[index:])
        return result | {
            "found": True,
            "where": path,
            "role": role_of(body, path),
            "before": text[max(0, index - 240) : index],
            "kept": what,
            "then": then,
        }
    return result | {"found": False, "kept": "absent"}


def versions(npm: Path) -> dict[str, str]:
    found = {}
    for client in CLIENTS:
        done = subprocess.run(
            [str(npm / "node_modules" / ".bin" / client), "--version"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        found[client] = (done.stdout.strip() or done.stderr.strip()).splitlines()[-1]
    return found


def table(summary: dict[str, Any]) -> str:
    rows = [
        "| client | version | server | where the first line is | what of the instructions "
        "is there | the server's tools |",
        "|---|---|---|---|---|---|",
    ]
    for run in summary["runs"]:
        where = f"`{run.get('where', '-')}` ({run.get('role', '-')})" if run["found"] else "-"
        offered = run.get("server_tools_offered") or []
        tools = f"{len(offered)} offered" if offered else "none offered"
        if run.get("server_tools_named"):
            tools += "; named: " + ", ".join(run["server_tools_named"][:3])
        what = run["kept"]
        if run["found"] and not what.startswith("whole"):
            what += f", then {json.dumps(run['then'][:24])}"
        rows.append(
            f"| {run['client']} | {summary['versions'][run['client']]} | {run['server']} "
            f"| {where} | {what} | {tools} |"
        )
    return "\n".join(rows) + "\n"


def inside(options: argparse.Namespace) -> int:
    out: Path = options.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    npm: Path = options.npm.resolve()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["PYTHONUNBUFFERED"] = "1"
    workdir = out / "work"
    workdir.mkdir(exist_ok=True)
    demo = [sys.executable, "dev.py", "demo", "--port", str(DEMO_PORT)]
    records = out / "requests.jsonl"
    model = [sys.executable, str(HERE / "fake_model.py"), "--port", str(MODEL_PORT)]
    summary: dict[str, Any] = {"versions": versions(npm), "runs": []}
    with (
        started(demo, out / "demo.log", env),
        started([*model, "--record", str(records)], out / "fake_model.log", env),
    ):
        token = demo_token(out / "demo.log", 600)
        wait_for_port(DEMO_PORT, 60)
        wait_for_port(MODEL_PORT, 30)
        ensure_long_document(token)
        references = {"http": http_instructions(token)}
        references["long"] = http_instructions(token, LONG_PROJECT)
        stdio = server_spec("stdio", token, out / "reference")
        references["stdio"] = stdio_instructions(
            [stdio["command"], *stdio["args"]], env | stdio["env"]
        )
        sys.path.insert(0, str(HERE))
        from probe_server import PROBE_INSTRUCTIONS

        references["probe"] = PROBE_INSTRUCTIONS
        for kind, text in references.items():
            (out / f"instructions-{kind}.txt").write_text(text)
        for client in options.clients:
            for server in options.servers:
                if ONLY_FOR.get(server, client) != client:
                    continue
                home = out / f"home-{client}-{server}"
                shutil.rmtree(home, ignore_errors=True)
                home.mkdir(parents=True)
                spec = server_spec(server, token, home)
                command, run_env = client_run(client, server, spec, npm, home)
                records.unlink(missing_ok=True)
                started_at = time.monotonic()
                with (
                    (home / "stdout.txt").open("w") as stdout,
                    (home / "stderr.txt").open("w") as stderr,
                ):
                    done = subprocess.run(
                        command, cwd=workdir, env=run_env, stdin=subprocess.DEVNULL,
                        stdout=stdout, stderr=stderr, timeout=options.timeout, check=False,
                    )  # fmt: skip
                kept_records = out / f"{client}-{server}.jsonl"
                lines = records.read_text().splitlines() if records.exists() else []
                kept_records.write_text("".join(line + "\n" for line in lines))
                reference = references[server.split("-")[0]]
                name = "probe" if server == "probe" else "agentdocs"
                run = {"client": client, "server": server, "exit": done.returncode}
                run["seconds"] = round(time.monotonic() - started_at, 1)
                run |= analyse([json.loads(line) for line in lines], reference, name)
                summary["runs"].append(run)
                print(f"{client} {server}: {run['kept']}", flush=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "summary.md").write_text(table(summary))
    print(table(summary))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--npm", type=Path, required=True, help="the npm prefix of the CLIs")
    parser.add_argument("--out", type=Path, default=Path("/tmp/mcp-measure"))
    parser.add_argument("--netns", default="agentdocs-mcp")
    parser.add_argument("--clients", type=lambda s: s.split(","), default=list(CLIENTS))
    parser.add_argument("--servers", type=lambda s: s.split(","), default=list(SERVERS))
    parser.add_argument("--timeout", type=float, default=300, help="seconds for one run")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.inside:
        return inside(options)
    return outside(options, [a for a in sys.argv[1:] if a != "--inside"])


if __name__ == "__main__":
    sys.exit(main())
