"""`agentdocs block` and `agentdocs mcp` never block an agent: against a real gunicorn
server that is stopped and started again in the middle of a run of turns, a server
that answers 503 and one that never answers."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.db import connection

from tests.app_servers import AGENT_NOTES, AppServer, Cast, app_environment, seed
from tests.cli.test_main import run_cli
from tests.conftest import empty_tables, need_service

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.django_db]


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    return f"postgres://{db['USER']}{password}@{host}:{db.get('PORT') or 5432}/{db['NAME']}"


@pytest.fixture(scope="module")
def server(
    django_db_setup, django_db_blocker, tmp_path_factory
) -> Iterator[tuple[AppServer, Cast]]:
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the live server shares the test database; set DATABASE_URL to PostgreSQL",
    )
    folder = tmp_path_factory.mktemp("offline")
    with django_db_blocker.unblock():
        cast = seed()
        env = app_environment(
            folder,
            DATABASE_URL=_database_url(),
            CELERY_BROKER_URL=settings.CELERY_BROKER_URL or "memory://",
        )
        app = AppServer(env, folder, name="offline")
        try:
            app.start(workers=1)
            yield app, cast
        finally:
            app.stop()
            connection.close()
            empty_tables()  # as a transactional test ends


# Process ids of this run: the read state of an earlier run's may still be kept.
RUN = uuid.uuid4().hex[:8]


def block(url: str, token: str, cache: Path, *extra: str, process: str = "agent-1"):
    process = f"{process}-{RUN}"
    return run_cli(
        "block",
        "--url",
        url,
        "--token",
        token,
        "--tenant",
        "scale",
        "--project",
        "web",
        "--process",
        process,
        "--no-agent-file",
        "--cache-dir",
        str(cache),
        *extra,
        cwd=cache.parent,
    )


def records(app: AppServer, cast: Cast, process: str) -> list[dict]:
    base = f"/api/v1/tenants/{cast.tenant}/projects/{cast.project}/bindings/"
    listing = app.call("GET", f"{base}?process={process}", cast.tokens["writer"])
    assert listing.status_code == 200, listing.text
    return [
        app.call("GET", f"{base}{row['id']}", cast.tokens["writer"]).json()
        for row in listing.json()["results"]
    ]


def cached_preview_sha(app: AppServer, cast: Cast) -> str:
    preview = requests.get(
        f"{app.url}{cast.memory_block}",
        headers={"Authorization": f"Token {cast.tokens['writer']}", "Accept": "text/plain"},
        timeout=30,
    )
    return hashlib.sha256(preview.content).hexdigest()


def test_a_run_of_turns_survives_the_server_stopping_and_uploads_the_record_after(server, tmp_path):
    app, cast = server
    cache = tmp_path / "cache"
    token = cast.tokens["turns"]
    first = block(app.url, token, cache)
    assert first.returncode == 0, first.stderr
    assert AGENT_NOTES.strip() in first.stdout.decode()
    second = block(app.url, token, cache)
    assert second.returncode == 0 and b"unchanged" in second.stderr
    # The cache holds the full block, no token, 0600.
    (kept,) = (cache / "blocks").iterdir()
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    assert token not in kept.read_text()
    assert AGENT_NOTES.strip() in json.loads(kept.read_text())["text"]
    full_sha = cached_preview_sha(app, cast)

    app.stop()
    offline = block(app.url, token, cache)
    assert offline.returncode == 0, offline.stderr
    assert AGENT_NOTES.strip() in offline.stdout.decode()
    assert hashlib.sha256(offline.stdout).hexdigest() == full_sha
    warning = offline.stderr.decode().strip().splitlines()
    assert len(warning) == 1 and "served_from: cache" in warning[0], warning
    # Nothing cached for another recipe: exit 1 with the reason, or the fallback file.
    missing = block(app.url, token, cache, "--recipe", "other")
    assert missing.returncode == 1
    assert b"no block is cached" in missing.stderr and b"cannot reach" in missing.stderr
    assert missing.stdout == b""
    fallback = tmp_path / "fallback.md"
    fallback.write_text("# Offline rules\n", encoding="utf-8")
    served = block(app.url, token, cache, "--recipe", "other", "--fallback-file", str(fallback))
    assert served.returncode == 0 and served.stdout == b"# Offline rules\n"

    app.start(workers=1)
    assert records(app, cast, f"agent-1-{RUN}") == []
    back = block(app.url, token, cache)
    assert back.returncode == 0, back.stderr
    (record,) = records(app, cast, f"agent-1-{RUN}")
    assert record["served_from"] == "cache"
    assert record["served_sha256"] == full_sha
    assert list((cache / "pending").rglob("*.json")) == []
    # Uploaded once.
    block(app.url, token, cache)
    assert len(records(app, cast, f"agent-1-{RUN}")) == 1


def test_a_4xx_answer_is_never_served_from_the_cache(server, tmp_path):
    app, cast = server
    cache = tmp_path / "cache"
    assert block(app.url, cast.tokens["turns"], cache, process="agent-4xx").returncode == 0
    refused = block(app.url, "not-a-token", cache, process="agent-4xx")
    assert refused.returncode == 1
    assert refused.stdout == b"" and b"HTTP 401" in refused.stderr
    unknown = block(app.url, cast.tokens["turns"], cache, "--recipe", "nope", process="agent-4xx")
    assert unknown.returncode == 1 and b"HTTP 404" in unknown.stderr
    assert list((cache / "pending").rglob("*.json")) == []


class _Answers503(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _copy_cache_to(cache: Path, server_url: str, other_url: str) -> None:
    """The block cached for ``server_url`` as if fetched from ``other_url``."""
    from agentdocs.client.cache import BlockCache, CacheKey

    def key(url: str) -> CacheKey:
        return CacheKey(server=url.rstrip("/") + "/api/v1/", tenant="scale", project="web")

    kept = BlockCache(cache).get(key(server_url))
    assert kept is not None
    BlockCache(cache).put(key(other_url), text=kept.text, etag=None)


def test_a_5xx_answer_and_a_timeout_serve_the_cached_block(server, tmp_path):
    app, cast = server
    cache = tmp_path / "cache"
    assert block(app.url, cast.tokens["turns"], cache, process="agent-5xx").returncode == 0
    broken = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers503)
    threading.Thread(target=broken.serve_forever, daemon=True).start()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers
    try:
        broken_url = f"http://127.0.0.1:{broken.server_address[1]}"
        silent_url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        _copy_cache_to(cache, app.url, broken_url)
        _copy_cache_to(cache, app.url, silent_url)
        five = block(broken_url, cast.tokens["turns"], cache, process="agent-5xx")
        assert five.returncode == 0, five.stderr
        assert AGENT_NOTES.strip() in five.stdout.decode() and b"HTTP 503" in five.stderr
        slow = block(silent_url, cast.tokens["turns"], cache, "--timeout", "1", process="agent-5xx")
        assert slow.returncode == 0, slow.stderr
        assert AGENT_NOTES.strip() in slow.stdout.decode()
        assert b"did not answer within 1 s" in slow.stderr
    finally:
        broken.shutdown()
        silent.close()


def test_mcp_get_memory_block_serves_the_cached_block_while_the_server_is_down(server, tmp_path):
    from mcp import Client, StdioServerParameters

    app, cast = server
    cache = tmp_path / "cache"
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(
        PYTHONPATH=str(Path(__file__).resolve().parents[2]),
        AGENTDOCS_TOKEN=cast.tokens["turns"],
        AGENTDOCS_CACHE_DIR=str(cache),
    )
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agentdocs.cli",
            "mcp",
            "--tenant",
            "scale",
            "--project",
            "web",
            "--url",
            app.url,
        ],
        env=env,
    )

    async def session() -> tuple[str, str, bool]:
        async with Client(parameters, mode="legacy") as client:  # type: ignore[arg-type]
            online = await client.call_tool("get_memory_block", {"process": MCP_PROCESS})
            app.stop()
            offline = await client.call_tool("get_memory_block", {"process": MCP_PROCESS})
            other = await client.call_tool(
                "get_memory_block", {"process": MCP_PROCESS, "recipe": "other"}
            )
            app.start(workers=1)
            await client.call_tool("get_memory_block", {"process": MCP_PROCESS})
            return _text(online), _text(offline), bool(other.is_error)

    import asyncio

    online, offline, other_failed = asyncio.run(asyncio.wait_for(session(), 120))
    assert AGENT_NOTES.strip() in online and AGENT_NOTES.strip() in offline
    assert other_failed
    (record,) = records(app, cast, MCP_PROCESS)
    assert record["served_from"] == "cache"
    assert record["served_sha256"] == hashlib.sha256(offline.encode()).hexdigest()


MCP_PROCESS = f"mcp-1-{RUN}"


def _text(result) -> str:
    return "".join(part.text for part in result.content if part.type == "text")
