"""Keeping a render's database reads in the shared cache, current to the last write.

Every turn of every agent process renders a Memory Block, and documents,
settings and recipes change rarely in comparison. So the rows a render reads
(`agentdocs.sql.render_reads`) can be kept in the cache, tagged with the
tenant's *generation*: a random token that every write path that can change a
render (documents, labels, `memory.*` settings, recipes) replaces by calling
`render_inputs_changed`. A render whose cached rows carry another generation
reads the database again, so a save is visible on the very next turn, as if
nothing were cached.

The generation is read before the database, and cached rows are tagged with
the generation read: rows read before a write committed can never pass for
rows read after it. The token is replaced when the write happens and again
once it has committed, so a render in between cannot keep the old rows either.

Only a cache shared by every process may hold them (Redis in production, the
disk cache of the embedded default on one machine): with a per-process
local-memory cache a write in one worker would not reach the others.
`AGENTDOCS_RENDER_CACHE` (on by default, as both are shared) says which.

This module writes the shared cache: the generation, the rows a render filled on a
miss, the validators. The keys, the code's stamp, this process's copies and a lookup
that leaves the shared cache as it was (`current_rows`, for the selectors that read
what a render reads) are `agentdocs.selectors.render_cache`'s.

Each process also keeps the rows it last used (`LOCAL`), with what it derived
from them (`Rows.memo`: the parsed context documents, a composed context layer):
while the generation read in the render's round trip is the one they were read
under, the process uses them without fetching or unpickling them again, so a
render of a project with 10,000 context documents costs what a small one does.
The generation is still read from the shared cache on every render, so a write
in any process is seen on the next turn all the same.

The same generation makes *validators* cheap: the ETag a conditional GET (the
Memory Block preview, a document) last answered with, stored under the request's
inputs and tagged with the generation read before the answer was built. While the
generation is unchanged, a request naming that ETag is answered 304 from one cache
round trip, without reading or rendering anything; access is still checked first,
on every request. A validator's key also holds a stamp of the code and the bundled
defaults (`build_stamp`), so a deploy that changes what an answer looks like never
serves an ETag of the old code.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from agentdocs import ratelimit
from agentdocs.cache import get_many_and_counts
from agentdocs.selectors.render_cache import (
    GENERATION_KEY,
    Rows,
    build_stamp,
    enabled,
    local_get,
    render_rows_key,
    rows_of_generation,
)

VALIDATOR_KEY = "validator:v1:{tenant_id}:{stamp}:{digest}"


def _new_generation(tenant_id: int) -> None:
    cache.set(GENERATION_KEY.format(tenant_id=tenant_id), uuid.uuid4().hex, None)


def render_inputs_changed(*, tenant_id: int) -> None:
    """Call from every write that can change what a render of the tenant reads."""
    if not enabled():
        return
    _new_generation(tenant_id)

    def after_commit() -> None:
        _new_generation(tenant_id)

    transaction.on_commit(after_commit, robust=True)


def _current_generation(tenant_id: int, found: dict[str, Any]) -> str:
    generation_key = GENERATION_KEY.format(tenant_id=tenant_id)
    generation = found.get(generation_key)
    if generation is None:
        cache.add(generation_key, uuid.uuid4().hex, None)
        generation = cache.get(generation_key)
    return str(generation)


def cached_rows(
    *,
    tenant_id: int,
    project_id: int,
    recipe: str | None,
    read: Callable[[], Any],
    label: str | None = None,
    size: Callable[[Any], int] = lambda rows: 0,
    with_keys: Sequence[str] = (),
    rate_limit: ratelimit.Windows | None = None,
) -> tuple[Rows, dict[str, Any]]:
    """``read()``'s result, from the cache when it is current for the tenant's generation.

    ``with_keys`` are other cache keys the caller needs (a process's read state):
    they come back in the same round trip, as a dict of the ones found. The
    ``rate_limit`` windows are counted in that round trip too, and checked before
    anything is read from the database (RateLimited past the limit). ``size`` says
    roughly how many bytes the rows hold, for the bound on this process's copies.

    While this process holds the rows of the current generation, the round trip
    does not fetch them; when it holds older ones, a second round trip does.
    """
    counters = rate_limit.counters if rate_limit is not None else []
    if not enabled():
        found, counts = get_many_and_counts(list(with_keys), counters=counters)
        if rate_limit is not None:
            rate_limit.check(counts)
        return Rows(read()), found
    generation_key = GENERATION_KEY.format(tenant_id=tenant_id)
    rows_key = render_rows_key(
        tenant_id=tenant_id, project_id=project_id, recipe=recipe, label=label
    )
    local = local_get(rows_key)
    wanted = [generation_key, *with_keys] if local else [generation_key, rows_key, *with_keys]
    found, counts = get_many_and_counts(wanted, counters=counters)
    if rate_limit is not None:
        rate_limit.check(counts)
    extras = {key: found[key] for key in with_keys if key in found}
    generation = _current_generation(tenant_id, found)
    rows, fresh = rows_of_generation(
        rows_key, generation, local=local, found=found, read=read, size=size
    )
    if fresh:
        cache.set(rows_key, (generation, rows.rows), settings.AGENTDOCS_RENDER_CACHE_TTL_SECONDS)
    return rows, extras


@dataclass(frozen=True)
class Validator:
    """The ETag last answered for one set of request inputs, when still current.

    ``etag`` is None when none is known for the tenant's current generation (or the
    render cache is off): the caller builds the answer and calls `store` with its ETag.
    """

    key: str | None
    generation: str | None
    etag: str | None

    def store(self, etag: str) -> None:
        if self.key is None or self.generation is None or etag == self.etag:
            return
        cache.set(self.key, (self.generation, etag), settings.AGENTDOCS_RENDER_CACHE_TTL_SECONDS)


def validator(*, tenant_id: int, inputs: Sequence[object]) -> Validator:
    """The validator of an answer built from the tenant's documents, settings and recipes
    and from ``inputs`` (what else the answer depends on: the project, the path, the
    representation, ...): one cache round trip, no database."""
    if not enabled():
        return Validator(key=None, generation=None, etag=None)
    digest = hashlib.sha256("\0".join(map(str, inputs)).encode("utf-8", "surrogatepass"))
    key = VALIDATOR_KEY.format(
        tenant_id=tenant_id, stamp=build_stamp(), digest=digest.hexdigest()[:40]
    )
    found = cache.get_many([GENERATION_KEY.format(tenant_id=tenant_id), key])
    generation = _current_generation(tenant_id, found)
    stored = found.get(key)
    etag = stored[1] if isinstance(stored, tuple) and stored[0] == generation else None
    return Validator(key=key, generation=generation, etag=etag)
