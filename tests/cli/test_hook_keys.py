"""The hook's copy of the server's published keys (`hook_context.published_keys`),
against a real HTTP server on 127.0.0.1 and a real cache folder: kept, so that a known
key id costs no round trip; fetched again for an unknown key id (a new key) and once
the copy is older than `KEYS_MAX_AGE_SECONDS` (a key the server took out of its set is
not trusted forever); the old copy used only when the server cannot be reached."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentdocs.cli import hook_context
from agentdocs.cli.hook_context import (
    KEYS_MAX_AGE_SECONDS,
    KEYS_PATH,
    keys_cache_name,
    published_keys,
)
from agentdocs.client import http
from agentdocs.client.cache import BlockCache


class KeysHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    published: list[dict] = []
    requests: list[str] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        KeysHandler.requests.append(self.path)
        body = json.dumps({"keys": KeysHandler.published}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def key(key_id: str) -> dict:
    return {"key_id": key_id, "algorithm": "Ed25519", "public_key": "x"}


@pytest.fixture
def keys_server() -> Iterator[str]:
    KeysHandler.published = [key("ed25519-old")]
    KeysHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), KeysHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def ids(keys: list | None) -> list[str]:
    return [entry["key_id"] for entry in keys or []]


def test_a_known_key_id_is_answered_from_the_cache_without_a_request(keys_server, tmp_path):
    cache = BlockCache(tmp_path)

    def fetch(key_id: str) -> list | None:
        return published_keys(http.Session(), cache, keys_server, key_id, timeout=5)

    assert ids(fetch("ed25519-old")) == ["ed25519-old"]
    assert ids(fetch("ed25519-old")) == ["ed25519-old"]
    assert KeysHandler.requests == [KEYS_PATH]  # the second from the cache

    # A rotation: the block names a key the copy does not know; fetched at once.
    KeysHandler.published = [key("ed25519-old"), key("ed25519-new")]
    assert ids(fetch("ed25519-new")) == ["ed25519-old", "ed25519-new"]
    assert len(KeysHandler.requests) == 2


def test_a_key_taken_out_of_the_published_set_is_dropped_after_the_max_age(
    keys_server, tmp_path, monkeypatch
):
    cache = BlockCache(tmp_path)
    assert ids(published_keys(http.Session(), cache, keys_server, "ed25519-old", timeout=5))
    KeysHandler.published = [key("ed25519-new")]  # the old key withdrawn
    now = time.time()
    monkeypatch.setattr(hook_context.time, "time", lambda: now + KEYS_MAX_AGE_SECONDS - 60)
    kept = published_keys(http.Session(), cache, keys_server, "ed25519-old", timeout=5)
    assert ids(kept) == ["ed25519-old"] and len(KeysHandler.requests) == 1
    monkeypatch.setattr(hook_context.time, "time", lambda: now + KEYS_MAX_AGE_SECONDS + 1)
    fetched = published_keys(http.Session(), cache, keys_server, "ed25519-old", timeout=5)
    assert ids(fetched) == ["ed25519-new"] and len(KeysHandler.requests) == 2


def test_a_copy_dated_in_the_future_is_fetched_again(keys_server, tmp_path):
    cache = BlockCache(tmp_path)
    published_keys(http.Session(), cache, keys_server, "ed25519-old", timeout=5)
    kept = cache.read_json(keys_cache_name(keys_server))
    assert isinstance(kept, dict)
    future = time.time() + 10 * KEYS_MAX_AGE_SECONDS
    cache.write_json(keys_cache_name(keys_server), {**kept, "fetched_at": future})
    published_keys(http.Session(), cache, keys_server, "ed25519-old", timeout=5)
    assert len(KeysHandler.requests) == 2


def test_with_the_server_down_the_copy_kept_is_used_however_old(tmp_path):
    cache = BlockCache(tmp_path)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{closed.getsockname()[1]}"
    assert published_keys(http.Session(), cache, down, "ed25519-old", timeout=1) is None
    cache.write_json(keys_cache_name(down), {"fetched_at": 0, "keys": [key("ed25519-old")]})
    kept = published_keys(http.Session(), cache, down, "ed25519-old", timeout=1)
    assert ids(kept) == ["ed25519-old"]
