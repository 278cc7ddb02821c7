"""The client's disk cache: the last good block per render key, and pending records.

Everything lives under one folder (`AGENTDOCS_CACHE_DIR`, else
`$XDG_CACHE_HOME/agentdocs`, else `~/.cache/agentdocs`), made 0700. Every file is
written to a temporary file in the same folder and renamed over the old one, so a
reader sees the old block or the new one, never half of one; files are 0600 and
hold no token. A pending binding record is one file, claimed by renaming it, so
two agent processes sharing the folder upload it once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CACHE_DIR_VARIABLE = "AGENTDOCS_CACHE_DIR"
FORMAT = "agentdocs-block-cache/v1"
PENDING_SUFFIX = ".json"
CLAIMED_SUFFIX = ".sending"
# A claim older than this is of a process that died while uploading: taken back.
STALE_CLAIM_SECONDS = 300


def default_cache_dir() -> Path:
    """`AGENTDOCS_CACHE_DIR`, else the user's cache folder (XDG) plus `agentdocs`."""
    configured = os.environ.get(CACHE_DIR_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "agentdocs"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def now_iso() -> str:
    from datetime import UTC, datetime  # only when writing: not on the hook's usual path

    return datetime.now(UTC).isoformat(timespec="seconds")


class CacheKey:
    """What a cached block is the block of. ``server`` is the API's base URL: two
    servers may both have a tenant `acme`. Equal keys are equal and hash alike. (The
    classes here are plain, not dataclasses: `dataclasses` imports `inspect`, a tenth of
    `agentdocs hook context`'s imports; bench/README.md.)"""

    __slots__ = ("label", "profile", "project", "recipe", "server", "tenant")

    def __init__(
        self,
        server: str,
        tenant: str,
        project: str,
        recipe: str | None = None,
        profile: str | None = None,
        label: str | None = None,
    ) -> None:
        self.server = server
        self.tenant = tenant
        self.project = project
        self.recipe = recipe
        self.profile = profile
        self.label = label

    def _values(self) -> tuple[str | None, ...]:
        return (self.server, self.tenant, self.project, self.recipe, self.profile, self.label)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CacheKey) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"CacheKey{self._values()!r}"

    def as_dict(self) -> dict[str, str | None]:
        return {
            "server": self.server,
            "tenant": self.tenant,
            "project": self.project,
            "recipe": self.recipe,
            "profile": self.profile,
            "label": self.label,
        }

    def digest(self) -> str:
        encoded = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(encoded.encode("utf-8")).hexdigest()[:32]

    def project_digest(self) -> str:
        """The pending records' folder: per server and project, whatever the recipe."""
        encoded = json.dumps([self.server, self.tenant, self.project], separators=(",", ":"))
        return hashlib.sha256(encoded.encode("utf-8")).hexdigest()[:32]


class CachedBlock:
    """A block kept: its text, sha256 and ETag, when it was last received
    (``fetched_at``, ISO 8601), and the server's signature of the text
    (`Agentdocs-Signature`), when it sent one."""

    __slots__ = ("etag", "fetched_at", "sha256", "signature", "text")

    def __init__(
        self,
        *,
        text: str,
        sha256: str,
        etag: str | None,
        fetched_at: str,
        signature: str | None = None,
    ) -> None:
        self.text = text
        self.sha256 = sha256
        self.etag = etag
        self.fetched_at = fetched_at
        self.signature = signature

    def _values(self) -> tuple[str | None, ...]:
        return (self.text, self.sha256, self.etag, self.fetched_at, self.signature)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CachedBlock) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"CachedBlock(sha256={self.sha256!r}, etag={self.etag!r})"

    @property
    def revalidable(self) -> bool:
        """Kept with the preview's ETag and the server's signature: asked again with
        `If-None-Match` rather than fetched whole."""
        return bool(self.etag and self.signature)


class PendingRecord:
    """A pending binding record claimed: its file and its request's payload."""

    __slots__ = ("path", "payload")

    def __init__(self, *, path: Path, payload: dict[str, Any]) -> None:
        self.path = path
        self.payload = payload


class BlockCache:
    """The cache folder; nothing is created until something is written."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    # Blocks

    def _block_path(self, key: CacheKey) -> Path:
        return self.folder / "blocks" / f"{key.digest()}.json"

    def get(self, key: CacheKey) -> CachedBlock | None:
        """The block kept for ``key``; None when there is none or it is unreadable (a
        file another version wrote, or damaged: it is replaced at the next refresh)."""
        try:
            data = json.loads(self._block_path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        if data.get("key") != key.as_dict() or not isinstance(data.get("text"), str):
            return None
        text: str = data["text"]
        # A file whose text does not match its hash is not served.
        if data.get("sha256") != text_sha256(text):
            return None
        etag = data.get("etag")
        signature = data.get("signature")
        return CachedBlock(
            text=text,
            sha256=data["sha256"],
            etag=etag if isinstance(etag, str) else None,
            fetched_at=str(data.get("fetched_at", "")),
            signature=signature if isinstance(signature, str) else None,
        )

    def put(
        self, key: CacheKey, *, text: str, etag: str | None, signature: str | None = None
    ) -> CachedBlock:
        block = CachedBlock(
            text=text,
            sha256=text_sha256(text),
            etag=etag,
            fetched_at=now_iso(),
            signature=signature,
        )
        data = {
            "format": FORMAT,
            "key": key.as_dict(),
            "etag": block.etag,
            "sha256": block.sha256,
            "fetched_at": block.fetched_at,
            "signature": block.signature,
            "text": block.text,
        }
        _write_atomically(self._block_path(key), json.dumps(data, ensure_ascii=False))
        return block

    # Other small JSON documents (the server's published keys)

    def read_json(self, name: str) -> object:
        """The document kept as ``name`` (None when there is none or it is unreadable)."""
        try:
            return json.loads((self.folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def write_json(self, name: str, value: object) -> None:
        _write_atomically(self.folder / name, json.dumps(value, ensure_ascii=False))

    # Pending binding records

    def _pending_folder(self, key: CacheKey) -> Path:
        return self.folder / "pending" / key.project_digest()

    def add_pending(self, key: CacheKey, payload: dict[str, Any]) -> Path:
        """Keep a binding record's request until it can be uploaded."""
        from datetime import UTC, datetime

        name = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%fZ')}-{os.urandom(16).hex()}"
        path = self._pending_folder(key) / f"{name}{PENDING_SUFFIX}"
        _write_atomically(path, json.dumps(payload, ensure_ascii=False))
        return path

    def claim_pending(self, key: CacheKey) -> Iterator[PendingRecord]:
        """The project's pending records, oldest first, each claimed (renamed) before it
        is yielded: a record another process claimed first is skipped. The caller
        `release`s or `discard`s each one."""
        folder = self._pending_folder(key)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        stale = time.time() - STALE_CLAIM_SECONDS
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.name.endswith(CLAIMED_SUFFIX) and entry.stat().st_mtime < stale:
                    os.replace(entry.path, folder / entry.name.removesuffix(CLAIMED_SUFFIX))
        names = sorted(
            entry.name
            for entry in entries
            if entry.name.endswith(PENDING_SUFFIX) or entry.name.endswith(CLAIMED_SUFFIX)
        )
        for name in dict.fromkeys(name.removesuffix(CLAIMED_SUFFIX) for name in names):
            path = folder / name
            claimed = path.with_name(name + CLAIMED_SUFFIX)
            try:
                os.replace(path, claimed)
                os.utime(claimed)  # the claim's time, for the stale check
            except OSError:
                continue  # another process has it
            try:
                payload = json.loads(claimed.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                claimed.unlink(missing_ok=True)
                continue
            if isinstance(payload, dict):
                yield PendingRecord(path=claimed, payload=payload)
            else:
                claimed.unlink(missing_ok=True)

    @staticmethod
    def release(record: PendingRecord) -> None:
        """Put a claimed record back, for the next successful call."""
        name = record.path.name.removesuffix(CLAIMED_SUFFIX)
        with contextlib.suppress(OSError):
            os.replace(record.path, record.path.with_name(name))

    @staticmethod
    def discard(record: PendingRecord) -> None:
        record.path.unlink(missing_ok=True)

    def pending_count(self, key: CacheKey) -> int:
        try:
            return sum(
                1
                for entry in os.scandir(self._pending_folder(key))
                if entry.name.endswith(PENDING_SUFFIX)
            )
        except OSError:
            return 0


def _write_atomically(path: Path, text: str) -> None:
    """``text`` at ``path``, 0600, by a rename over it: never half written."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    import tempfile  # only when writing: the hook's usual run writes nothing

    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # 0600
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
