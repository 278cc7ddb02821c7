"""`agentdocs hooks install --deliver` and `agentdocs hook context`, run as subprocesses
the way each tool runs them, against a live server in a real git repository: the block
at start, stubs at a resume, the full block again after a compaction; always the one
form the tool reads (server up, down, slow, 5xx); signatures checked; every delivery a
binding record of the exact bytes, uploaded by a child the hook leaves behind when it
exits; a session's records one timeline."""

from __future__ import annotations

import hashlib
import json
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentdocs.core import hook_delivery, targets
from agentdocs.core.hook_settings import CONTEXT_COMMAND
from agentdocs.models import BindingRecord
from config.celery import app as celery_app
from tests.cli.test_hooks import _environment, run_cli
from tests.conftest import api_token_key

TOOLS = ["claude-code", "gemini-cli", "codex"]
EXISTING = {
    "claude-code": {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "SessionStart": [
                {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
            ]
        },
    },
    "gemini-cli": {"theme": "dark", "hooks": {"BeforeTool": [{"hooks": [{"command": "x"}]}]}},
    "codex": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "y"}]}]}},
}


def hook_input(session: str, source: str = "startup", event: str = "SessionStart") -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": ".",
            "hook_event_name": event,
            "source": source,
        }
    ).encode()


@pytest.fixture
def repo(tmp_path):
    folder = tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


@pytest.fixture
def server(live_server, settings, tmp_path, project, writer, make_document):
    settings.MEDIA_ROOT = tmp_path / "media"
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    make_document(project, "agent.md", "# House rules\n- Write tests first.\n")
    make_document(project, ".AGENTS/style.md", "# Style\n- Short functions.\n")
    yield {
        "AGENTDOCS_URL": live_server.url,
        "AGENTDOCS_TOKEN": api_token_key(writer),
        "AGENTDOCS_TENANT": "acme",
        "AGENTDOCS_PROJECT": "web",
        "AGENTDOCS_CACHE_DIR": str(tmp_path / "cache"),
    }
    _wait_for_background_binds(tmp_path / "cache")
    celery_app.conf.task_always_eager = eager


# How long a test waits for a record the hook's detached child uploads.
BIND_WAIT_SECONDS = 10.0


def _background_binds(cache: Path) -> list[int]:
    """The processes started with ``cache`` as their cache folder still running: the
    hooks' detached binds (Linux's /proc; none found elsewhere)."""
    needle = f"AGENTDOCS_CACHE_DIR={cache}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if needle in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


def _wait_for_background_binds(cache: Path) -> None:
    """Until the hooks' detached binds are done, so that none outlives the live server
    (and the test's database) it binds to."""
    deadline = time.monotonic() + BIND_WAIT_SECONDS
    while _background_binds(cache) and time.monotonic() < deadline:
        time.sleep(0.05)


def records_of(process: str, count: int = 1) -> list[BindingRecord]:
    """The process's binding records, oldest first, once there are ``count`` of them:
    the hook exits before its detached child has uploaded the record."""
    deadline = time.monotonic() + BIND_WAIT_SECONDS
    while True:
        records = list(BindingRecord.objects.filter(process=process).order_by("created_at", "id"))
        if len(records) >= count or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(records) == count, (
        f"{len(records)} binding records of {process!r} {BIND_WAIT_SECONDS:g} s after the "
        f"hook exited, {count} expected: the background bind did not arrive"
    )
    return records


def context(repo: Path, tool: str, stdin: bytes, env: dict[str, str], *extra: str):
    result = run_cli("hook", "context", "--tool", tool, *extra, cwd=repo, env=env, stdin=stdin)
    assert result.returncode == 0
    assert len(result.stderr.decode().splitlines()) == 1, result.stderr
    return result


def received(tool: str, result, event: str = "SessionStart") -> str | None:
    """The context ``tool`` adds from the hook's stdout, by its own rules; the output must
    be usable."""
    reading = hook_delivery.read_hook_output(
        tool=tool, event=event, output=result.stdout.decode("utf-8")
    )
    assert reading.usable, reading.problems
    assert result.stdout.count(b"\n") == 1  # one JSON object, nothing else
    return reading.context


def _free_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return free.getsockname()[1]


# Installing


@pytest.mark.parametrize("tool", TOOLS)
def test_deliver_merges_installs_once_and_uninstalls_exactly(repo, tool):
    hook = targets.CONTEXT_HOOKS[tool].session_hook
    assert hook is not None
    path = repo / hook.file
    path.parent.mkdir()
    original = json.dumps(EXISTING[tool], indent=2) + "\n"
    path.write_text(original)

    result = run_cli("hooks", "install", "--tool", tool, "--deliver", cwd=repo)

    assert result.returncode == 0, result.stderr
    settings = json.loads(path.read_text())
    for key, value in EXISTING[tool].items():
        if key != "hooks":
            assert settings[key] == value
    command = f"{CONTEXT_COMMAND} --tool {tool}"
    for event in hook.context_events:
        groups = [g for g in settings["hooks"][event.event] if command in json.dumps(g)]
        assert groups == [
            {
                **({"matcher": event.matcher} if event.matcher else {}),
                "hooks": [{"type": "command", "command": command}],
            }
        ]
    before = path.read_bytes()
    again = run_cli("hooks", "install", "--tool", tool, "--deliver", cwd=repo)
    assert b"already installed" in again.stdout and path.read_bytes() == before
    listing = run_cli("hooks", "list", cwd=repo).stdout.decode()
    row = next(line for line in listing.splitlines() if line.startswith(tool))
    assert "+".join(e.event for e in hook.context_events) in row.split()

    assert run_cli("hooks", "uninstall", "--tool", tool, "--deliver", cwd=repo).returncode == 0
    assert path.read_text() == original


def test_claude_code_deliver_hooks_every_start_resume_clear_and_compaction(repo):
    run_cli("hooks", "install", "--tool", "claude-code", "--deliver", cwd=repo)
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings == {
        "hooks": {
            "SessionStart": [
                {
                    "matcher": "startup|resume|clear|compact",
                    "hooks": [
                        {"type": "command", "command": "agentdocs hook context --tool claude-code"}
                    ],
                }
            ]
        }
    }
    assert run_cli("hooks", "uninstall", "--tool", "claude-code", cwd=repo).returncode == 0
    assert not (repo / ".claude").exists()


@pytest.mark.parametrize("tool", TOOLS)
def test_the_docs_show_exactly_the_settings_the_installer_writes(repo, tool):
    hook = targets.CONTEXT_HOOKS[tool].session_hook
    run_cli("hooks", "install", "--tool", tool, "--deliver", cwd=repo)
    page = (Path(__file__).resolve().parents[2] / "docs" / "delivery.md").read_text()
    section = page[page.index(f"\n`{hook.file}`") :]
    shown = section[section.index("```json\n") + len("```json\n") : section.index("\n```\n")]
    assert json.loads(shown) == json.loads((repo / hook.file).read_text())


def test_a_tool_without_a_context_hook_is_refused(repo):
    result = run_cli("hooks", "install", "--tool", "cursor", "--deliver", cwd=repo)
    assert result.returncode == 2
    assert b"no hook that can add context" in result.stderr
    assert not (repo / ".cursor").exists()


# The hook


def test_startup_full_resume_stubs_compact_full_again_as_one_timeline(server, repo, client):
    env = server
    start = received("claude-code", context(repo, "claude-code", hook_input("s-1"), env))
    records_of("s-1", 1)
    resume = received("claude-code", context(repo, "claude-code", hook_input("s-1", "resume"), env))
    records_of("s-1", 2)
    compact = received(
        "claude-code", context(repo, "claude-code", hook_input("s-1", "compact"), env)
    )

    assert start is not None and "Write tests first." in start
    assert resume is not None and "Write tests first." not in resume and len(resume) < len(start)
    assert compact == start
    records = records_of("s-1", 3)
    assert [r.record["delivery"]["source"] for r in records] == ["startup", "resume", "compact"]
    for record in records:
        assert record.problem_count == 0
        assert record.record["delivery"]["received"]["usable"] is True
    client.force_login(records[0].created_by)
    base = "/api/v1/tenants/acme/projects/web/bindings/"
    timeline = client.get(base, {"session": "s-1"}).json()["results"]
    assert [(r["delivery"]["event"], r["delivery"]["source"]) for r in timeline] == [
        ("SessionStart", "startup"),
        ("SessionStart", "resume"),
        ("SessionStart", "compact"),
    ]
    rebuilt = client.get(f"{base}{records[1].pk}/reconstruct").json()
    assert rebuilt["delivery"]["verified"] is True
    assert rebuilt["delivery"]["context"] == resume


def test_every_tool_gets_its_own_valid_form_with_the_label(server, repo):
    for tool in TOOLS:
        result = context(repo, tool, hook_input(f"{tool}-1"), server, "--label", "latest")
        text = received(tool, result)
        assert text is not None and "Write tests first." in text
    gemini = context(repo, "gemini-cli", hook_input("g-2", "auto", "PreCompress"), server)
    reading = hook_delivery.read_hook_output(
        tool="gemini-cli", event="PreCompress", output=gemini.stdout.decode()
    )
    assert reading.usable and json.loads(gemini.stdout)["systemMessage"]
    # After the compaction Gemini's next start of the session gets the full block again.
    context(repo, "gemini-cli", hook_input("g-2"), server)
    after = received("gemini-cli", context(repo, "gemini-cli", hook_input("g-2", "resume"), server))
    assert after is not None and "Write tests first." not in after


def test_the_recipe_named_is_used_and_a_refusal_is_one_valid_line(server, repo):
    result = context(repo, "claude-code", hook_input("s-r"), server, "--recipe", "nope")
    text = received("claude-code", result)
    assert text is not None and text.startswith("agentdocs: the house rules could not be")


class _Failing(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(503)
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _unavailable(state: str) -> Iterator[str]:
    """The URL of a server that is ``down`` (nothing listens), answers ``5xx`` (503 to
    everything) or is ``slow`` (accepts and never answers)."""
    if state == "down":
        yield f"http://127.0.0.1:{_free_port()}"
    elif state == "5xx":
        httpd = HTTPServer(("127.0.0.1", 0), _Failing)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}"
        finally:
            httpd.shutdown()
            httpd.server_close()
    else:
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(64)
            yield f"http://127.0.0.1:{silent.getsockname()[1]}"


@pytest.mark.parametrize("state", ["down", "5xx", "slow"])
def test_server_stopped_mid_session_serves_the_cached_block_in_the_valid_form(server, repo, state):
    first = received("claude-code", context(repo, "claude-code", hook_input("s-2"), server))
    assert first is not None
    # The same server as the cache knows it, now unreachable: the cache key is the URL.
    cache = Path(server["AGENTDOCS_CACHE_DIR"])
    with _unavailable(state) as url:
        env = {**server, "AGENTDOCS_URL": url}
        for tool in TOOLS:
            result = context(repo, tool, hook_input("s-3", "compact"), env, "--timeout", "1")
            text = received(tool, result)
            assert text is not None and text.startswith("agentdocs: the house rules could not")
        # With the live server's URL cached, a restart of the session is served from
        # the cache when the first call fails: simulate with the cache copied.
        _copy_cache_for(cache, server["AGENTDOCS_URL"], url)
        result = context(repo, "claude-code", hook_input("s-2", "compact"), env, "--timeout", "1")
        assert received("claude-code", result) == first
        assert b"from the cache" in result.stderr


# Every event each tool's hooks are installed on, with each source it documents.
EVENTS = {
    "claude-code": [("SessionStart", s) for s in ("startup", "resume", "clear", "compact")],
    "codex": [("SessionStart", s) for s in ("startup", "resume", "clear", "compact")],
    "gemini-cli": [
        *(("SessionStart", s) for s in ("startup", "resume", "clear")),
        ("PreCompress", "auto"),
        ("PreCompress", "manual"),
    ],
}


def _only_the_valid_form(tool: str, event: str, result) -> None:
    """Exit 0, one line on stderr, and on stdout one JSON object in the form ``tool``
    reads from ``event``, that the tool can use, and nothing else."""
    assert result.returncode == 0
    assert len(result.stderr.decode().splitlines()) == 1, result.stderr
    output = result.stdout.decode("utf-8")
    assert output.endswith("\n") and output.count("\n") == 1, output
    value = json.loads(output)
    if hook_delivery.adds_context(tool, event):
        assert list(value) == ["hookSpecificOutput"]
        assert value["hookSpecificOutput"]["hookEventName"] == event
        assert isinstance(value["hookSpecificOutput"]["additionalContext"], str)
    else:
        assert list(value) == ["systemMessage"] and isinstance(value["systemMessage"], str)
    assert hook_delivery.read_hook_output(tool=tool, event=event, output=output).usable


@pytest.mark.parametrize("state", ["up", "down", "5xx", "slow"])
def test_every_event_of_every_tool_gets_only_the_valid_form(server, repo, state):
    """Each tool at each of its events, sessions with a block cached and new ones, and
    input the tool never sends (none, not JSON, not UTF-8): only the valid form."""
    assert {tool: {e for e, _ in events} for tool, events in EVENTS.items()} == {
        tool: {e.event for e in targets.CONTEXT_HOOKS[tool].session_hook.context_events}
        for tool in TOOLS
    }
    for tool in TOOLS:  # a block of each tool's session in the cache
        context(repo, tool, hook_input(f"cached-{tool}"), server)
    cache = Path(server["AGENTDOCS_CACHE_DIR"])
    with _unavailable(state) if state != "up" else nullcontext(server["AGENTDOCS_URL"]) as url:
        if state != "up":
            _copy_cache_for(cache, server["AGENTDOCS_URL"], url)
        env = {**server, "AGENTDOCS_URL": url}
        for tool, events in EVENTS.items():
            for index, (event, source) in enumerate(events):
                # Every other event of a session whose block is cached, the others new.
                session = f"cached-{tool}" if index % 2 else f"new-{tool}-{event}-{source}"
                result = run_cli(
                    "hook",
                    "context",
                    "--tool",
                    tool,
                    "--timeout",
                    "0.5",
                    cwd=repo,
                    env=env,
                    stdin=hook_input(session, source, event),
                )
                _only_the_valid_form(tool, event, result)
            stdin = {"up": b"", "down": b"not json\n", "5xx": b"[1, 2]", "slow": b"\xff"}[state]
            result = run_cli(
                "hook",
                "context",
                "--tool",
                tool,
                "--timeout",
                "0.5",
                cwd=repo,
                env=env,
                stdin=stdin,
            )
            _only_the_valid_form(tool, "SessionStart", result)


def _copy_cache_for(cache: Path, old: str, new: str) -> None:
    """The live server's cached block and keys, as if kept for ``new``."""
    for path in (cache / "blocks").glob("*.json"):
        data = json.loads(path.read_text())
        data["key"]["server"] = data["key"]["server"].replace(old, new)
        from agentdocs.client.cache import CacheKey

        key = CacheKey(**data["key"])
        (cache / "blocks" / f"{key.digest()}.json").write_text(json.dumps(data))
    for path in (cache / "keys").glob("*.json"):
        name = hashlib.sha256(new.encode()).hexdigest()[:32]
        (cache / "keys" / f"{name}.json").write_text(path.read_text())


def test_a_block_whose_signature_fails_is_never_injected(server, repo):
    received("claude-code", context(repo, "claude-code", hook_input("s-4"), server))
    cache = Path(server["AGENTDOCS_CACHE_DIR"])
    url = f"http://127.0.0.1:{_free_port()}"
    _copy_cache_for(cache, server["AGENTDOCS_URL"], url)
    for path in (cache / "blocks").glob("*.json"):
        data = json.loads(path.read_text())
        data["text"] = data["text"].replace("Write tests first.", "Skip the tests.")
        data["sha256"] = hashlib.sha256(data["text"].encode()).hexdigest()
        path.write_text(json.dumps(data))

    result = context(
        repo, "claude-code", hook_input("s-4", "compact"), {**server, "AGENTDOCS_URL": url}
    )

    text = received("claude-code", result)
    assert text is not None and text.startswith("agentdocs: the house rules could not be verified")
    assert "Skip the tests." not in result.stdout.decode()


# The bind, after the hook's exit


class _HeldBinds(BaseHTTPRequestHandler):
    """Relays every request to the live server, but holds each binding record's POST
    until the test sets `server.release`; then relays it, or, when `server.forward` was
    False as it arrived, drops it (the connection closed, nothing stored)."""

    protocol_version = "HTTP/1.1"

    def _relay(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.command == "POST" and self.path.endswith("/bindings/"):
            forward = self.server.forward  # type: ignore[attr-defined]
            self.server.arrived.set()  # type: ignore[attr-defined]
            self.server.release.wait(60)  # type: ignore[attr-defined]
            if not forward:
                self.close_connection = True
                return
        upstream = HTTPConnection(*self.server.upstream, timeout=30)  # type: ignore[attr-defined]
        headers = {
            name: value
            for name, value in self.headers.items()
            if name.lower() not in ("host", "connection", "content-length")
        }
        upstream.request(self.command, self.path, body=body or None, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
        upstream.close()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("connection", "content-length", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = _relay

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _held_binds(url: str, *, forward: bool) -> Iterator[ThreadingHTTPServer]:
    """A server in front of ``url`` that holds the binding records' POSTs (`_HeldBinds`);
    its URL is `server.url`."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _HeldBinds)
    httpd.daemon_threads = True
    parts = url.split("://", 1)[1].split(":")
    httpd.upstream = (parts[0], int(parts[1].rstrip("/")))  # type: ignore[attr-defined]
    httpd.arrived = threading.Event()  # type: ignore[attr-defined]
    httpd.release = threading.Event()  # type: ignore[attr-defined]
    httpd.forward = forward  # type: ignore[attr-defined]
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd
    finally:
        httpd.release.set()  # type: ignore[attr-defined]
        httpd.shutdown()
        httpd.server_close()


def test_the_hook_exits_before_its_binding_record_is_uploaded_and_the_record_arrives(server, repo):
    with _held_binds(server["AGENTDOCS_URL"], forward=True) as held:
        env = {**server, "AGENTDOCS_URL": held.url}
        started = time.monotonic()
        result = context(repo, "claude-code", hook_input("s-bg"), env, "--timeout", "20")
        took = time.monotonic() - started

        assert received("claude-code", result) is not None
        assert result.stderr.decode().endswith("; binding in the background\n")
        # A hook waiting for its bind would have waited out --timeout: the POST is held.
        assert took < 20
        assert held.arrived.wait(BIND_WAIT_SECONDS), "the detached child made no bind"
        assert not BindingRecord.objects.filter(process="s-bg").exists()
        held.release.set()
        (record,) = records_of("s-bg")

    assert record.record["delivery"]["output"] == result.stdout.decode()
    assert record.record["delivery"]["received"]["usable"] is True


def test_a_bind_not_made_within_the_timeout_is_kept_and_uploaded_by_a_later_call(server, repo):
    cache = Path(server["AGENTDOCS_CACHE_DIR"])
    with _held_binds(server["AGENTDOCS_URL"], forward=False) as held:
        env = {**server, "AGENTDOCS_URL": held.url}
        result = context(repo, "claude-code", hook_input("s-kept"), env, "--timeout", "2")
        assert held.arrived.wait(BIND_WAIT_SECONDS), "the detached child made no bind"
        # The child gives up with what is left of --timeout and keeps the record.
        _wait_for_background_binds(cache)
        assert not _background_binds(cache)
        (pending,) = (cache / "pending").glob("*/*.json")
        assert json.loads(pending.read_text())["process"] == "s-kept"
        assert not BindingRecord.objects.filter(process="s-kept").exists()

        # The server answers again: the next hook (a later session's start) uploads it.
        held.forward = True
        held.release.set()
        context(repo, "claude-code", hook_input("s-next"), env)
        (record,) = records_of("s-kept")
        records_of("s-next")

    assert not list((cache / "pending").glob("*/*.json"))
    assert record.record["delivery"]["output"] == result.stdout.decode()


def test_with_hook_bind_wait_the_record_is_made_before_the_hook_exits(server, repo):
    """`AGENTDOCS_HOOK_BIND=wait`, as where there is no `os.fork` (Windows): the record
    exists when the hook has exited, and its line names it."""
    env = {**server, "AGENTDOCS_HOOK_BIND": "wait"}
    result = context(repo, "claude-code", hook_input("s-wait"), env)

    record = BindingRecord.objects.get(process="s-wait")
    assert result.stderr.decode().endswith(f"; bound as record {record.pk}\n")
    assert record.record["delivery"]["output"] == result.stdout.decode()


# Relying on the files the tool loads itself


def _sync(repo: Path, env: dict[str, str]) -> dict:
    result = run_cli(
        "sync", "--format", "claude-md,agents-md,gemini-md", "--no-report", cwd=repo, env=env
    )
    assert result.returncode == 0, result.stderr
    return json.loads((repo / "agentdocs.lock.json").read_text())


@pytest.mark.parametrize("tool", TOOLS)
def test_layers_in_the_synced_file_are_not_sent_twice(server, repo, tool):
    lock = _sync(repo, server)
    main = targets.CONTEXT_HOOKS[tool].main
    assert main in lock["files"]

    result = context(repo, tool, hook_input(f"{tool}-sync"), server)

    text = received(tool, result)
    assert text is not None
    assert text.splitlines()[0].startswith("<!-- agentdocs: this block relies on the files")
    assert f"{main} (in-sync: holds Agent Notes (agent.md)" in text.splitlines()[0]
    # The rules are in the file the tool loads; the block names it instead of repeating them.
    assert "Write tests first." in (repo / main).read_text()
    assert "Write tests first." not in text and "Short functions." not in text
    assert f"## Agent Notes (agent.md)\n\nIn {main}, which" in text
    assert f'<context path=".AGENTS/style.md">\nIn {main}, which' in text
    (record,) = records_of(f"{tool}-sync")
    delivery = record.record["delivery"]
    (relied,) = delivery["relies_on"]
    assert relied["path"] == main and relied["state"] == "in-sync"
    assert (
        relied["layers"] == "Agent Notes (agent.md); Project Context (.AGENTS/): .AGENTS/style.md"
    )


@pytest.mark.parametrize(("change", "state"), [("edit", "edited-locally"), ("delete", "missing")])
def test_a_synced_file_edited_or_missing_is_named_and_every_layer_sent(server, repo, change, state):
    _sync(repo, server)
    main = repo / "CLAUDE.md"
    if change == "edit":
        main.write_text(main.read_text() + "\n- A local rule.\n")
    else:
        main.unlink()

    text = received("claude-code", context(repo, "claude-code", hook_input("s-e"), server))

    assert text is not None
    assert text.splitlines()[0] == (
        f"<!-- agentdocs: this block relies on the files Claude Code loads itself: "
        f"CLAUDE.md ({state}) -->"
    )
    assert "Write tests first." in text and "Short functions." in text
    (record,) = records_of("s-e")
    delivery = record.record["delivery"]
    assert delivery["relies_on"] == [{"path": "CLAUDE.md", "state": state}]


def test_a_layer_changed_since_the_sync_is_sent_in_full(server, repo, project, writer):
    _sync(repo, server)
    from agentdocs.models import Document
    from agentdocs.services import documents as document_service

    agent = Document.objects.get(project=project, path="agent.md")
    document_service.document_write(
        document=agent,
        body="# House rules\n- Write tests first.\n- And review them.\n",
        base_version=agent.version,
        user=writer,
        reason="newer than the sync",
    )

    text = received("claude-code", context(repo, "claude-code", hook_input("s-n"), server))

    assert text is not None and "And review them." in text
    assert "CLAUDE.md (in-sync" in text.splitlines()[0]
    assert "holds Agent Notes" not in text.splitlines()[0]


# The seed's replay


@pytest.mark.parametrize("tool", TOOLS)
def test_status_lines_before_the_output_are_recorded_as_what_the_tool_got_and_flagged(
    server, repo, client, writer, tool
):
    """The seed's August, replayed: the installed hook command gains two lines of status
    output before agentdocs' own; what the tool gets is bound, read by the tool's rules,
    and flagged, while agentdocs' own output stays usable."""
    run_cli("hooks", "install", "--tool", tool, "--deliver", cwd=repo)
    hook = targets.CONTEXT_HOOKS[tool].session_hook
    settings = json.loads((repo / hook.file).read_text())
    (command,) = [
        handler["command"]
        for group in settings["hooks"]["SessionStart"]
        for handler in group["hooks"]
        if handler["command"].startswith(CONTEXT_COMMAND)
    ]
    # The hook as a wrapper that prints status first, run by a shell as the tool runs it.
    wrapped = "echo 'Checking for updates...'; echo 'agentdocs 1.2 ready'; " + command.replace(
        "agentdocs ", f"{shlex.quote(sys.executable)} -m agentdocs.cli ", 1
    )
    ran = subprocess.run(
        ["sh", "-c", wrapped],
        cwd=repo,
        env=_environment(server),
        input=hook_input(f"s-5-{tool}"),
        capture_output=True,
        timeout=60,
    )
    assert ran.returncode == 0
    records_of(f"s-5-{tool}")  # agentdocs' own delivery, bound after the hook exited
    broken = ran.stdout.decode("utf-8")
    ours = broken.split("agentdocs 1.2 ready\n", 1)[1]
    assert hook_delivery.read_hook_output(tool=tool, event="SessionStart", output=ours).usable
    assert not hook_delivery.read_hook_output(tool=tool, event="SessionStart", output=broken).usable
    data = broken.encode()
    client.force_login(writer)
    base = "/api/v1/tenants/acme/projects/web/bindings/"
    answer = client.post(
        base,
        {
            "process": f"s-5-{tool}",
            "manifest": {},
            "delivery": {
                "tool": tool,
                "event": "SessionStart",
                "source": "startup",
                "format": hook_delivery.FORMAT_ADDITIONAL_CONTEXT,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "output": broken,
            },
        },
        content_type="application/json",
    )

    assert answer.status_code == 422
    record = answer.json()
    assert [p["kind"] for p in record["problems"]] == ["unusable_delivery"]
    assert "stdout is not JSON" in record["problems"][0]["detail"]
    assert record["delivery"]["received"]["usable"] is False
    rebuilt = client.get(f"{base}{record['id']}/reconstruct").json()["delivery"]
    assert rebuilt["output"] == broken and rebuilt["verified"] is True
    if tool == "claude-code":
        # Claude Code adds the whole thing as plain text: the envelope, not the rules.
        assert rebuilt["context"] == broken
    else:
        # Gemini CLI and Codex read JSON only: the session starts with nothing.
        assert rebuilt["context"] is None
    # The session's own deliveries, made by agentdocs' hook, are usable.
    timeline = client.get(base, {"session": f"s-5-{tool}"}).json()["results"]
    assert [r["delivery"]["usable"] for r in timeline] == [True, False]


def test_a_delivery_whose_hash_is_not_its_output_is_refused(server, client, writer):
    client.force_login(writer)
    answer = client.post(
        "/api/v1/tenants/acme/projects/web/bindings/",
        {
            "process": "s-6",
            "delivery": {
                "tool": "codex",
                "event": "SessionStart",
                "format": hook_delivery.FORMAT_ADDITIONAL_CONTEXT,
                "bytes": 2,
                "sha256": "0" * 64,
                "output": "{}",
            },
        },
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert answer.json()["field"] == "delivery.sha256"
    assert not BindingRecord.objects.filter(process="s-6").exists()


def test_an_outsider_cannot_read_a_session_timeline(server, repo, client, outsider, other_tenant):
    context(repo, "codex", hook_input("s-7"), server)
    client.force_login(outsider)
    answer = client.get("/api/v1/tenants/acme/projects/web/bindings/", {"session": "s-7"})
    assert answer.status_code == 404


# Import weight

# What no `--help` or hook run may import: the MCP SDK and its pydantic, Django, and
# `requests` (the client talks HTTP with the standard library, agentdocs.client.http).
HEAVY = ("pydantic", "pydantic_core", "mcp", "django", "requests", "urllib3")
# What `agentdocs hook context` imports besides the standard library, and nothing more:
# the hook sits on every session's start (bench/hook_context.py). Not the target
# registry (`agentdocs.core.targets`, the hooks' declarations are
# `agentdocs.core.session_hooks`), nor the renderer, the export or another command's
# module. A module added to the hook's path on purpose is added here.
HOOK_PATH = {
    "agentdocs",
    "agentdocs.cli",
    "agentdocs.cli.main",
    "agentdocs.cli.base",
    "agentdocs.cli.hook",
    "agentdocs.cli.hook_context",
    "agentdocs.client",
    "agentdocs.client.http",
    "agentdocs.client.wire",
    "agentdocs.client.blocks",
    "agentdocs.client.cache",
    "agentdocs.core",
    "agentdocs.core.hook_delivery",
    "agentdocs.core.layer_headings",
    "agentdocs.core.session_hooks",
    "agentdocs.core.signing",
}
# The packages outside the standard library it may import: `cryptography` (the block's
# Ed25519 signature) and what the interpreter's start loads (the virtual environment's
# `.pth` files).
HOOK_PACKAGES = ("cryptography", "_cffi_backend", "_distutils_hack", "sitecustomize")


def _imported(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdin: bytes = b"",
    python: tuple[str, ...] = ("-m", "agentdocs.cli"),
) -> set[str]:
    """The modules ``agentdocs ARGV`` imports, by `python -X importtime`."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *python, *argv],
        cwd=cwd,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
            **env,
        },
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    imported = {
        line.split("|")[-1].strip()
        for line in result.stderr.decode().splitlines()
        if line.startswith("import time:") and "imported package" not in line  # the header
    }
    assert "agentdocs.cli.main" in imported, result.stderr[-2000:]
    return imported


def _heavy(imported: set[str]) -> set[str]:
    return {name for name in imported if name.split(".")[0] in HEAVY}


def _off_the_hook_path(imported: set[str]) -> set[str]:
    """What ``imported`` holds beyond the standard library, `HOOK_PATH` and
    `HOOK_PACKAGES` (a failed import, such as `copy`'s of `org.python`, is listed too)."""
    return {
        name
        for name in imported
        if name.split(".")[0] not in sys.stdlib_module_names
        and name.split(".")[0] not in (*HOOK_PACKAGES, "org")
        and not name.startswith("__editable__")
        and name not in HOOK_PATH
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["hook", "--help"],
        ["hook", "context", "--help"],
        ["hooks", "install", "--help"],
        ["hook", "context", "--tool", "claude-code", "--url", "http://127.0.0.1:9"],
        ["hook", "session-start", "--tool", "claude-code", "--url", "http://127.0.0.1:9"],
    ],
)
def test_the_hook_and_help_import_no_heavy_module(tmp_path, argv):
    assert not _heavy(_imported(argv, cwd=tmp_path, env={}))


@pytest.mark.parametrize(
    "argv",
    [
        ["hook", "--help"],
        ["hook", "context", "--help"],
        ["hook", "context", "--tool", "claude-code", "--url", "http://127.0.0.1:9"],
        ["hook", "context", "--tool", "nonesuch"],
    ],
)
def test_the_context_hook_imports_only_its_own_path(tmp_path, argv):
    imported = _imported(argv, cwd=tmp_path, env={})
    assert "agentdocs.core.targets" not in imported
    assert not _off_the_hook_path(imported)


def test_the_hook_path_check_sees_the_registry_creep_back(tmp_path):
    """Were the hook to import the target registry again (or the renderer), the check
    above would see it."""
    imported = _imported(
        [],
        cwd=tmp_path,
        env={},
        python=(
            "-c",
            "import agentdocs.cli.main, agentdocs.core.targets, agentdocs.core.memory_block",
        ),
    )
    assert {"agentdocs.core.targets", "agentdocs.core.memory_block"} <= _off_the_hook_path(imported)


def test_a_hook_that_renders_verifies_and_binds_imports_no_heavy_module(server, repo):
    """The whole path against a live server: render, the keys, the signature, the bind."""
    for source in ("startup", "compact"):
        imported = _imported(
            ["hook", "context", "--tool", "claude-code"],
            cwd=repo,
            env=server,
            stdin=hook_input("s-i", source),
        )
        assert {"agentdocs.core.signing", "agentdocs.client.wire"} <= imported
        # Plain http: not `http.client`, with the `email` package and `ssl` it imports.
        assert not {"http.client", "email", "email.parser", "ssl"} & imported
        assert not _heavy(imported)
        assert not _off_the_hook_path(imported)
    records_of("s-i", 2)


def test_the_check_sees_a_heavy_module(tmp_path):
    """The MCP server module imports the SDK: were a hook to import it, the check above
    would see it."""
    imported = _imported(
        [], cwd=tmp_path, env={}, python=("-c", "import agentdocs.cli.main, agentdocs.mcp.server")
    )
    assert {"mcp", "pydantic"} <= _heavy(imported)


def test_the_check_sees_requests(tmp_path):
    """Were a module on the hook's path to import `requests` again, the checks above
    would see it and urllib3."""
    imported = _imported(
        [], cwd=tmp_path, env={}, python=("-c", "import agentdocs.cli.main, requests")
    )
    assert {"requests", "urllib3"} <= _heavy(imported)
