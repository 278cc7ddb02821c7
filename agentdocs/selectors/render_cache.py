"""The render cache, read side: where a render's rows are kept, and a read of them that
leaves the shared cache as it was.

`agentdocs.services.render_cache` fills the shared cache (a render's rows on a miss,
the tenant's generation, the validators) and explains the scheme; this module holds
what both sides share (the keys, the code's stamp, this process's copies of the rows)
and `current_rows`, the lookup a selector may make: the rows when this process or the
shared cache holds them for the tenant's current generation, else the database's.

Filling the shared cache on a miss is a write (other processes see it; a selector never
writes: docs/architecture.md), so it stays with the render, the hot path that needs
it. Keeping a copy in this process (`LOCAL`, bounded, tagged with the generation read
before the database) is a memo, as `functools.cache` is: no other process and no
other answer sees it, and a read keeps one so that a list of repositories or an export
asked again reads nothing until the tenant's next write.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache

GENERATION_KEY = "render-generation:v1:{tenant_id}"
# The rows' key holds the code's stamp (`build_stamp`): rows that an older deploy cached
# in a cache that outlives it (Redis, the disk cache) have an older shape, and are
# never read by newer code.
ROWS_KEY = "render-rows:v2:{stamp}:{tenant_id}:{project_id}:{recipe}"
# Rows read by a label (issue 29) are kept apart: ROWS_KEY, then this.
LABEL_SUFFIX = ":label:{label}"


def render_rows_key(
    *, tenant_id: int, project_id: int, recipe: str | None, label: str | None = None
) -> str:
    """Where the render rows of one project, recipe and label are cached."""
    key = ROWS_KEY.format(
        stamp=build_stamp(), tenant_id=tenant_id, project_id=project_id, recipe=recipe or ""
    )
    return key + LABEL_SUFFIX.format(label=label) if label else key


def enabled() -> bool:
    return bool(settings.AGENTDOCS_RENDER_CACHE)


@dataclass
class Rows:
    """A render's rows and ``memo``, where the caller keeps what it derives from them.

    The memo lives as long as the rows stay current in this process (an empty one
    each time when the render cache is off), so anything in it must be a function
    of the rows and of its own key alone."""

    rows: Any
    memo: dict[Hashable, Any] = field(default_factory=dict)


@dataclass
class Local:
    generation: str
    rows: Rows
    size: int


# The rows each process last used, by rows key, least recently used first. Bounded by
# entries and by the bytes of their documents, so a few huge projects cannot hold a
# worker's memory. `agentdocs.services.render_cache` puts; both sides look up.
LOCAL: OrderedDict[str, Local] = OrderedDict()
LOCAL_LOCK = threading.Lock()


def local_get(rows_key: str) -> Local | None:
    with LOCAL_LOCK:
        local = LOCAL.get(rows_key)
        if local is not None:
            LOCAL.move_to_end(rows_key)
        return local


# Bounds of this process's copies: by entries and by the bytes of their documents.
LOCAL_MAX_ENTRIES = 256
LOCAL_MAX_BYTES = 64 * 1024 * 1024


def local_put(rows_key: str, generation: str, rows: Any, size: int) -> Rows:
    """``rows`` as read under ``generation``, kept in this process (unless one copy would
    take more than a quarter of the bound), the least recently used dropped past it."""
    kept = Rows(rows)
    if size > LOCAL_MAX_BYTES // 4:
        return kept
    with LOCAL_LOCK:
        LOCAL.pop(rows_key, None)
        LOCAL[rows_key] = Local(generation, kept, size)
        total = sum(local.size for local in LOCAL.values())
        while len(LOCAL) > LOCAL_MAX_ENTRIES or total > LOCAL_MAX_BYTES:
            _, dropped = LOCAL.popitem(last=False)
            total -= dropped.size
    return kept


def local_clear() -> None:
    """Forget this process's rows (tests that change the cache under it)."""
    with LOCAL_LOCK:
        LOCAL.clear()


def current_rows(
    *,
    tenant_id: int,
    project_id: int,
    recipe: str | None,
    read: Callable[[], Any],
    label: str | None = None,
    size: Callable[[Any], int] = lambda rows: 0,
) -> Rows:
    """``read()``'s result, from this process's copy or the shared cache when either is
    current for the tenant's generation; else ``read()`` itself (one cache round trip,
    then the database on a miss). Kept in this process (``size``: about how many bytes
    the rows hold), never in the shared cache."""
    if not enabled():
        return Rows(read())
    generation_key = GENERATION_KEY.format(tenant_id=tenant_id)
    rows_key = render_rows_key(
        tenant_id=tenant_id, project_id=project_id, recipe=recipe, label=label
    )
    local = local_get(rows_key)
    found = cache.get_many([generation_key] if local else [generation_key, rows_key])
    generation = found.get(generation_key)
    if generation is None:
        # No generation: no rows in the cache can be current (a writer makes one).
        return Rows(read())
    rows, _fresh = rows_of_generation(
        rows_key, generation, local=local, found=found, read=read, size=size
    )
    return rows


def rows_of_generation(
    rows_key: str,
    generation: str,
    *,
    local: Local | None,
    found: dict[str, Any],
    read: Callable[[], Any],
    size: Callable[[Any], int],
) -> tuple[Rows, bool]:
    """The rows of ``generation``: this process's copy (``local``) when it is of that
    generation; else the shared cache's (from ``found``, the round trip that fetched the
    rows' key when there was no copy here, or one more round trip when the copy is
    older); else ``read()``. Kept in this process. The flag says whether they were read
    fresh: the render then keeps them in the shared cache, a selector never does."""
    if local is not None and local.generation == generation:
        return local.rows, False
    stored = found.get(rows_key) if local is None else cache.get(rows_key)
    if stored is not None and stored[0] == generation:
        rows = stored[1]
        return local_put(rows_key, generation, rows, size(rows)), False
    rows = read()
    return local_put(rows_key, generation, rows, size(rows)), True


@functools.cache
def build_stamp() -> str:
    """A digest of the package's code and the bundled default documents, once per process:
    what a validated answer looks like can change only when one of them does."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    defaults = Path(settings.AGENTDOCS_DEFAULT_DOCUMENTS_DIR)
    files = sorted(package.rglob("*.py"))
    if defaults.is_dir():
        files += sorted(path for path in defaults.rglob("*") if path.is_file())
    for path in files:
        digest.update(str(path).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
