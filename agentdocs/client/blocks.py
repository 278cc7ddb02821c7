"""A turn's Memory Block that never blocks the agent.

`ResilientBlocks.turn` renders the turn (`POST .../memory-block/`). When it
succeeds, the records of runs served from the cache are uploaded first and the
cached block is refreshed with a conditional preview (`GET .../memory-block/` with
`If-None-Match`, answered 304 without a render while nothing changed), unless the
turn's text is the cached block itself (a full render of an unchanged block). When the
server cannot be reached, times out or answers 5xx, the cached block is served,
with one warning, and the run is kept as a pending binding record
(`served_from: cache` and the sha256 of the text served). A 4xx answer (a bad
token, an unknown project or recipe) is the caller's error: never served from the
cache.

What is cached is the full block, the preview a new process would get, not the
turn's text: a later turn's text holds stubs for what the process already
received, which an agent that lost its context could not use.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from typing import Any
from urllib.parse import quote

from agentdocs.client import http
from agentdocs.client.cache import BlockCache, CachedBlock, CacheKey, text_sha256

DEFAULT_TIMEOUT_SECONDS = 5.0
SIGNATURE_HEADER = "Agentdocs-Signature"
# Pending records uploaded per successful call at most, so a long outage's backlog
# does not make one turn slow; the rest go with the next calls.
MAX_UPLOADS_PER_CALL = 20
# Statuses that mean "try the pending record again later", not "it is refused".
RETRY_LATER = frozenset({408, 429})


class Unavailable(Exception):
    """The server could not be reached, timed out or answered 5xx; why, in words."""


class NoCachedBlock(Exception):
    """The server is unavailable and nothing is cached for this render."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"{reason}, and no block is cached for this render")
        self.reason = reason


class Turn:
    """A turn's block: its text; the render's JSON answer (None when it was served from
    the cache or as text); ``served_from`` "server" or "cache"; the text's sha256; the
    warning written, if any; and the server's signature of the text (None: none was
    sent, or none was kept)."""

    __slots__ = ("answer", "served_from", "sha256", "signature", "text", "warning")

    def __init__(
        self,
        *,
        text: str,
        answer: dict[str, Any] | None,
        served_from: str,
        sha256: str,
        warning: str | None = None,
        signature: str | None = None,
    ) -> None:
        self.text = text
        self.answer = answer
        self.served_from = served_from
        self.sha256 = sha256
        self.warning = warning
        self.signature = signature


class ResilientBlocks:
    """One project's renders, with the cache. ``refused`` turns a 4xx response into
    the caller's exception (the CLI's and the MCP server's differ); ``warn`` writes
    one line for the person or the agent client's log."""

    def __init__(
        self,
        *,
        session: http.Session,
        api_base: str,
        tenant: str,
        project: str,
        cache: BlockCache,
        timeout: float,
        refused: Callable[[http.Response], Exception],
        warn: Callable[[str], None],
    ) -> None:
        self.session = session
        self.api_base = api_base
        self.tenant = tenant
        self.project = project
        self.cache = cache
        self.timeout = timeout
        self.refused = refused
        self.warn = warn

    def _url(self, rest: str) -> str:
        return (
            f"{self.api_base}tenants/{quote(self.tenant, safe='')}/"
            f"projects/{quote(self.project, safe='')}/{rest}"
        )

    def key(self, *, recipe: str | None, profile: str | None, label: str | None = None) -> CacheKey:
        return CacheKey(
            server=self.api_base,
            tenant=self.tenant,
            project=self.project,
            recipe=recipe or None,
            profile=profile or None,
            label=label or None,
        )

    def _send(self, method: str, url: str, **kwargs: Any) -> http.Response:
        """The response, if below 500; Unavailable otherwise."""
        try:
            response = self.session.request(method, url, timeout=self.timeout, **kwargs)
        except http.Timeout:
            raise Unavailable(f"{url} did not answer within {self.timeout:g} s") from None
        except http.TransportError as error:
            raise Unavailable(f"cannot reach {url}: {error}") from None
        if response.status_code >= 500:
            raise Unavailable(f"{url} answered HTTP {response.status_code}")
        return response

    def turn(
        self,
        *,
        payload: dict[str, Any],
        recipe: str | None,
        profile: str | None,
        label: str | None = None,
        as_text: bool = False,
        keep_pending: bool = True,
        while_waiting: Callable[[], object] | None = None,
        revalidate_later: bool = False,
    ) -> Turn:
        """Render a turn (``payload`` is the POST body, without label: it is added when
        given); the cached block when the server is unavailable. NoCachedBlock when it
        is and nothing is cached; ``refused(response)`` raised for a 4xx. Without
        ``keep_pending`` a run served from the cache keeps no pending record: the caller
        keeps its own (`agentdocs hook context`, with what it delivered).
        ``while_waiting`` runs once the render's request is sent, before its answer is
        read (`http.Session.request`). With ``revalidate_later`` a block already cached is
        not brought up to date here: the caller does it later (`refresh_unless_cached`;
        the hook, once its output is written); none cached, one is fetched at once."""
        key = self.key(recipe=recipe, profile=profile, label=label)
        body = {**payload, **({"label": label} if label else {})}
        accept = "text/plain" if as_text else "application/json"
        try:
            response = self._send(
                "POST",
                self._url("memory-block/"),
                json=body,
                headers={"Accept": accept},
                while_waiting=while_waiting,
            )
        except Unavailable as unavailable:
            return self._serve_cached(
                key,
                process=str(payload["process"]),
                reason=str(unavailable),
                keep_pending=keep_pending,
            )
        if response.status_code >= 400:
            raise self.refused(response)
        if as_text:
            text, answer = response.content.decode("utf-8"), None
        else:
            answer = response.json()
            text = answer["text"]
        self.upload_pending(key)
        sha256 = text_sha256(text)
        cached = self.cache.get(key)
        if cached is None or not revalidate_later:
            self._refresh_unless(key, cached, sha256)
        return Turn(
            text=text,
            answer=answer,
            served_from="server",
            sha256=sha256,
            signature=response.headers.get(SIGNATURE_HEADER),
        )

    def refresh_unless_cached(self, key: CacheKey, sha256: str) -> None:
        """Bring the cached block for ``key`` up to date after a turn whose text's
        sha256 is ``sha256``. A full render of an unchanged block is the cached block
        itself, byte for byte: the cache is up to date without asking the server again."""
        self._refresh_unless(key, self.cache.get(key), sha256)

    def _refresh_unless(self, key: CacheKey, cached: CachedBlock | None, sha256: str) -> None:
        if cached is None or not cached.revalidable or cached.sha256 != sha256:
            self.refresh(key, cached)

    def refresh(self, key: CacheKey, cached: CachedBlock | None) -> CachedBlock | None:
        """The cached block for ``key`` (``cached``, what the cache holds), brought up
        to date with a conditional preview; the one kept when the server cannot say (the
        turn was served all the same)."""
        headers = {"Accept": "text/plain"}
        # A block kept without its signature is fetched again whole, to get one.
        if cached is not None and cached.revalidable:
            headers["If-None-Match"] = str(cached.etag)
        params = {name: value for name, value in key.as_dict().items() if name in PREVIEW_KEYS}
        try:
            response = self._send(
                "GET",
                self._url("memory-block/"),
                params={name: value for name, value in params.items() if value},
                headers=headers,
            )
        except Unavailable:
            return cached
        if response.status_code == 304 and cached is not None:
            return cached
        if response.status_code != 200:
            return cached
        return self.cache.put(
            key,
            text=response.content.decode("utf-8"),
            etag=response.headers.get("ETag"),
            signature=response.headers.get(SIGNATURE_HEADER),
        )

    def _serve_cached(
        self, key: CacheKey, *, process: str, reason: str, keep_pending: bool = True
    ) -> Turn:
        cached = self.cache.get(key)
        if cached is None:
            raise NoCachedBlock(reason)
        if keep_pending:
            self.cache.add_pending(
                key,
                {
                    "process": process,
                    # The run bound no manifest: what it was given is the served text.
                    "manifest": {},
                    "served_from": "cache",
                    "served_sha256": cached.sha256,
                },
            )
        warning = (
            f"agentdocs: {reason}; serving the block cached at {cached.fetched_at} "
            f"(sha256 {cached.sha256[:12]}), recorded as served_from: cache"
        )
        self.warn(warning)
        return Turn(
            text=cached.text,
            answer=None,
            served_from="cache",
            sha256=cached.sha256,
            warning=warning,
            signature=cached.signature,
        )

    def bind(self, record: dict[str, Any]) -> http.Response:
        """POST a binding record now; Unavailable when the server cannot take it."""
        return self._send("POST", self._url("bindings/"), json=record)

    def upload_pending(self, key: CacheKey) -> int:
        """Upload the project's pending records (at most MAX_UPLOADS_PER_CALL); how many
        were stored. One the server refuses (4xx) is dropped with a warning; the
        others wait for the next call once the server is unavailable again."""
        stored = 0
        # Claimed one at a time, as they are taken: the rest stay for the next call.
        for record in islice(self.cache.claim_pending(key), MAX_UPLOADS_PER_CALL):
            try:
                response = self._send("POST", self._url("bindings/"), json=record.payload)
            except Unavailable:
                self.cache.release(record)
                break
            if response.status_code in (201, 422):
                self.cache.discard(record)
                stored += 1
            elif response.status_code in RETRY_LATER:
                self.cache.release(record)
            else:
                self.cache.discard(record)
                self.warn(
                    f"agentdocs: the server refused a pending binding record of process "
                    f"{record.payload.get('process')!r} (HTTP {response.status_code}); dropped"
                )
        return stored


# The parts of the key the preview takes as query parameters.
PREVIEW_KEYS = ("recipe", "profile", "label")
