"""The offline client's disk cache (`agentdocs.client.cache`): what it keeps, where,
with which rights, and what it refuses to serve."""

from __future__ import annotations

import json

from agentdocs.client.cache import BlockCache, CacheKey, default_cache_dir, text_sha256

KEY = CacheKey(server="http://a/api/v1/", tenant="acme", project="web")


def test_the_folder_is_the_variable_else_xdg_else_home(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTDOCS_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("AGENTDOCS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "agentdocs"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "agentdocs"


def test_a_block_is_kept_per_key_0600_in_a_0700_folder(tmp_path):
    cache = BlockCache(tmp_path / "c")
    kept = cache.put(KEY, text="# Rules ü\n", etag='"mb-1-text"')
    assert kept.sha256 == text_sha256("# Rules ü\n")
    assert cache.get(KEY) == kept
    other = CacheKey(server="http://a/api/v1/", tenant="acme", project="web", recipe="r")
    assert cache.get(other) is None
    (path,) = (tmp_path / "c" / "blocks").iterdir()
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "c" / "blocks").stat().st_mode & 0o777 == 0o700
    # Nothing half written is left behind.
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_a_damaged_or_tampered_file_is_not_served(tmp_path):
    cache = BlockCache(tmp_path)
    cache.put(KEY, text="good\n", etag=None)
    (path,) = (tmp_path / "blocks").iterdir()
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "text": "changed\n"}))
    assert cache.get(KEY) is None
    path.write_text("{not json")
    assert cache.get(KEY) is None


def test_a_pending_record_is_claimed_once_and_released_for_later(tmp_path):
    cache = BlockCache(tmp_path)
    cache.add_pending(KEY, {"process": "p1"})
    cache.add_pending(KEY, {"process": "p2"})
    first = BlockCache(tmp_path).claim_pending(KEY)
    record = next(first)
    assert record.payload == {"process": "p1"}
    # Another process sees only what is not claimed.
    assert [r.payload for r in BlockCache(tmp_path).claim_pending(KEY)] == [{"process": "p2"}]
    cache.release(record)
    assert cache.pending_count(KEY) == 1
    (again,) = cache.claim_pending(KEY)
    cache.discard(again)
    assert cache.pending_count(KEY) == 0


def test_a_claim_left_by_a_process_that_died_is_taken_back(tmp_path):
    import os
    import time

    from agentdocs.client import cache as cache_module

    cache = BlockCache(tmp_path)
    cache.add_pending(KEY, {"process": "p1"})
    record = next(cache.claim_pending(KEY))  # claimed, then the process dies
    assert list(cache.claim_pending(KEY)) == []
    old = time.time() - cache_module.STALE_CLAIM_SECONDS - 1
    os.utime(record.path, (old, old))
    (again,) = cache.claim_pending(KEY)
    assert again.payload == {"process": "p1"}
