"""`agentdocs hook context`: the Memory Block written into an agent session by the
tool's own hook (`agentdocs hooks install --deliver`), verified, and bound byte for byte.

    agentdocs hook context --tool TOOL [--dir .] [--recipe R] [--profile P] [--label L]
                           [--timeout 3] [--cache-dir DIR]

It reads the tool's hook input (session id, event, source) and renders the block for
the process named by the session id: the full block at a start, stubs for what the
session holds at a resume, and after a clear or a compaction the read state forgotten
and the full block again (an event that cannot add context, Gemini CLI's PreCompress,
makes the session's next start a reset). What the synced file the tool loads itself
holds word for word (`CLAUDE.md`, `GEMINI.md`, `AGENTS.md`, in sync with
`agentdocs.lock.json`) is not sent twice: the block names the file, its state and what
it holds (`hook_delivery.relied_on`). The block's signature is checked against the
server's published keys (kept in the cache folder); a block whose signature fails is
never injected: one line saying the rules could not be verified is, instead. A server
that is down, slow or answering 5xx gets the last good block from the cache
(`served_from: cache`).

Stdout carries exactly one JSON object in the form the tool reads from that hook
(`agentdocs.core.hook_delivery`) and nothing else; diagnostics go to stderr, one line;
the exit status is always 0. What was written is bound as a binding record with a
`delivery` section (the exact bytes, their sha256, and what the tool makes of them),
uploaded by a detached child once the hook has exited (at once, before the exit, where
there is no `os.fork` or with `AGENTDOCS_HOOK_BIND=wait`), or kept and uploaded with a
later call when the server is down or does not answer within `--timeout`.
No Django here.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdocs.cli.base import write
from agentdocs.client import http
from agentdocs.client.blocks import (
    RETRY_LATER,
    NoCachedBlock,
    ResilientBlocks,
    Turn,
    Unavailable,
)
from agentdocs.client.cache import BlockCache, CacheKey, default_cache_dir
from agentdocs.core import hook_delivery
from agentdocs.core.hook_delivery import Delivery, HookCall
from agentdocs.core.session_hooks import CONTEXT_HOOKS

if TYPE_CHECKING:
    from agentdocs.core import signing


DEFAULT_HOOK_TIMEOUT_SECONDS = 3.0
LOCK_FILE = "agentdocs.lock.json"
KEYS_PATH = "/.well-known/agentdocs/keys.json"
# The published keys are kept in the cache folder, so that a hook whose block names a
# key it knows makes one round trip (the render), and fetched again after this long (a
# key the server took out of its published set is trusted at most this long after), at
# once for a key id they do not name (a new key), and whenever the copy kept is dated
# in the future.
KEYS_MAX_AGE_SECONDS = 3600
NOT_VERIFIED = (
    "agentdocs: the house rules could not be verified ({why}); none were injected. "
    "Ask the person running this session to check the agentdocs server."
)
NOT_DELIVERED = "agentdocs: the house rules could not be delivered ({why})."
# `wait`: the binding record is uploaded before the hook exits, not by a detached child.
BIND_ENV = "AGENTDOCS_HOOK_BIND"
RESET_LATER_MESSAGE = (
    "agentdocs: the history is being compacted; the full house rules are sent again at "
    "this session's next start"
)


def configure(parser: argparse.ArgumentParser) -> None:
    env = os.environ
    parser.add_argument("--tool", required=True, help=f"one of {', '.join(CONTEXT_HOOKS)}")
    parser.add_argument("--dir", type=Path, default=Path("."), help="the repository (default: .)")
    parser.add_argument("--url", default=env.get("AGENTDOCS_URL"), help="default: $AGENTDOCS_URL")
    parser.add_argument(
        "--token", default=env.get("AGENTDOCS_TOKEN"), help="default: $AGENTDOCS_TOKEN"
    )
    parser.add_argument(
        "--tenant",
        default=env.get("AGENTDOCS_TENANT"),
        help="default: $AGENTDOCS_TENANT, else the lock file's",
    )
    parser.add_argument(
        "--project",
        default=env.get("AGENTDOCS_PROJECT"),
        help="default: $AGENTDOCS_PROJECT, else the lock file's",
    )
    parser.add_argument("--recipe", help="a recipe of the tenant (default: the lock file's)")
    parser.add_argument("--profile", help="a profile of the recipe (default: the lock file's)")
    parser.add_argument("--label", help="read documents by this label (default: the lock file's)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_HOOK_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help="the most the hook takes, counted from its start: a server that has not "
        "answered by then gets the cached block served instead "
        f"(default: {DEFAULT_HOOK_TIMEOUT_SECONDS:g})",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the last good block and the server's keys are kept (default: "
        "$AGENTDOCS_CACHE_DIR, else $XDG_CACHE_HOME/agentdocs or ~/.cache/agentdocs)",
    )


class Outcome:
    """What one run delivers: the text inside the tool's form, how the block was had
    (``block``: server, cache, refused or none), and the line for stderr."""

    __slots__ = ("block", "line", "relies_on", "text", "turn")

    def __init__(
        self,
        *,
        text: str,
        block: str,
        line: str,
        turn: Turn | None = None,
        relies_on: list[dict[str, str]] | None = None,
    ) -> None:
        self.text = text
        self.block = block
        self.line = line
        self.turn = turn
        self.relies_on = relies_on or []


class _Refused(Exception):
    def __init__(self, response: http.Response) -> None:
        super().__init__(f"the server refused the render (HTTP {response.status_code})")


# What the hook keeps of its --timeout for writing its output after the render gave up.
WRITE_MARGIN_SECONDS = 0.1


def seconds_since_start() -> float:
    """How long ago this process started (the interpreter and the imports included),
    from /proc on Linux; 0 where that cannot be read. The tool's hook timeout counts
    from the start, so --timeout does too."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as uptime:
            now = float(uptime.read().split()[0])
        return max(0.0, now - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def new_process_id(tool: str) -> str:
    """A process id for a session whose hook input named none."""
    import uuid  # rarely needed, and it imports `platform`: not on every hook's path

    return f"{tool}-{uuid.uuid4()}"


def _remaining(args: argparse.Namespace, started: float) -> float:
    """What is left of --timeout, less the margin for writing the output."""
    left = args.timeout - (time.monotonic() - started) - WRITE_MARGIN_SECONDS
    return max(0.05, left)


def _read_lock(folder: Path) -> dict[str, Any]:
    try:
        lock = json.loads((folder / LOCK_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return lock if isinstance(lock, dict) else {}


def synced_files(
    tool: str, folder: Path, lock: dict[str, Any]
) -> dict[str, tuple[str, str | None]]:
    """The file ``tool`` loads natively, when the last sync wrote it: its state against
    the lock file (`in-sync`, `edited-locally` or `missing`) and, in sync, its text."""
    hook = CONTEXT_HOOKS.get(tool)
    files = lock.get("files")
    if hook is None or not isinstance(files, dict) or hook.main not in files:
        return {}
    try:
        data = (folder / hook.main).read_bytes()
    except OSError:
        return {hook.main: (hook_delivery.MISSING, None)}
    if hashlib.sha256(data).hexdigest() != files[hook.main]:
        return {hook.main: (hook_delivery.EDITED, None)}
    try:
        return {hook.main: (hook_delivery.IN_SYNC, data.decode("utf-8"))}
    except UnicodeDecodeError:
        return {hook.main: (hook_delivery.EDITED, None)}


def _session_marker(cache: BlockCache, key: CacheKey, session: str) -> str:
    digest = hashlib.sha256(
        json.dumps([key.digest(), session], separators=(",", ":")).encode("utf-8")
    ).hexdigest()[:32]
    return f"sessions/{digest}.json"


def _import_signing() -> None:
    """The signature check (`agentdocs.core.signing`, with `cryptography`), imported
    while the server renders: after the render's request is sent, before its answer is
    read (the server works on the other core)."""
    from agentdocs.core import signing  # noqa: F401


def keys_cache_name(url: str) -> str:
    """Where the cache folder keeps the published keys of the server at ``url``."""
    return f"keys/{hashlib.sha256(url.encode('utf-8')).hexdigest()[:32]}.json"


def published_keys(
    session: http.Session, cache: BlockCache, url: str, key_id: str, *, timeout: float
) -> list[signing.PublicKey] | None:
    """The server's published keys: the cached copy while it names ``key_id`` and is
    younger than KEYS_MAX_AGE_SECONDS, else fetched again; the copy kept, however old,
    when they cannot be fetched (a block served from the cache, the server down); None
    when they can be had neither way."""
    name = keys_cache_name(url)
    kept = cache.read_json(name)
    kept_keys = None
    if isinstance(kept, dict) and isinstance(kept.get("keys"), list):
        kept_keys = kept["keys"]
        try:
            age = time.time() - float(kept.get("fetched_at") or 0)
        except (TypeError, ValueError):
            age = -1.0
        fresh = 0 <= age < KEYS_MAX_AGE_SECONDS
        if fresh and any(isinstance(k, dict) and k.get("key_id") == key_id for k in kept_keys):
            return kept_keys
    try:
        response = session.get(url.rstrip("/") + KEYS_PATH, timeout=timeout)
        document = response.json() if response.status_code == 200 else None
    except (http.TransportError, ValueError):
        document = None
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list) or not all(isinstance(k, dict) for k in keys):
        return kept_keys
    cache.write_json(name, {"fetched_at": time.time(), "keys": keys})
    return keys


def verify_block(
    turn: Turn,
    *,
    session: http.Session,
    cache: BlockCache,
    url: str,
    tenant: str,
    project: str,
    timeout: float,
) -> str | None:
    """None when ``turn``'s text carries a valid signature of this server for this
    project; else why not, in words."""
    from agentdocs.core import signing  # imported during the render (`_import_signing`)

    if not turn.signature:
        return "the block carries no signature"
    try:
        claim, _payload, _signature = signing.token_decode(turn.signature)
    except signing.MalformedToken as error:
        return f"the signature cannot be read: {error}"
    keys = published_keys(session, cache, url, claim["key_id"], timeout=timeout)
    if keys is None:
        return "the server's published keys cannot be had"
    for key in keys:
        refusal = signing.key_id_refusal(key)
        if refusal is not None:
            return f"the published keys are refused: {refusal}"
    verdict = signing.token_verify(
        turn.signature, data=turn.text.encode("utf-8"), kind=signing.MEMORY_BLOCK, keys=keys
    )
    if not verdict.valid:
        return verdict.detail
    if claim["tenant"] != tenant or claim["project"] != project:
        return f"the block was signed for {claim['tenant']}/{claim['project']}"
    return None


def _deliver(args: argparse.Namespace, call: HookCall, started: float) -> tuple[Outcome, Any]:
    """The outcome, and what is needed to bind it: (blocks, key, session) or None."""
    lock = _read_lock(args.dir)
    tenant = args.tenant or lock.get("tenant")
    project = args.project or lock.get("project")
    missing = [
        name
        for name, value in {
            "url": args.url,
            "token": args.token,
            "tenant": tenant,
            "project": project,
        }.items()
        if not value
    ]
    if missing:
        names = ", ".join(f"AGENTDOCS_{name.upper()}" for name in missing)
        unset = f"{names} not set"
        return Outcome(text=NOT_DELIVERED.format(why=unset), block="none", line=unset), None
    recipe = args.recipe or lock.get("recipe") or None
    profile = args.profile or lock.get("profile") or None
    label = args.label or lock.get("label") or None
    session = call.session or new_process_id(call.tool)
    api = http.Session({"Authorization": f"Bearer {args.token}"})
    warnings: list[str] = []
    cache = BlockCache(args.cache_dir or default_cache_dir())
    blocks = ResilientBlocks(
        session=api,
        api_base=str(args.url).rstrip("/") + "/api/v1/",
        tenant=str(tenant),
        project=str(project),
        cache=cache,
        timeout=_remaining(args, started),
        refused=_Refused,
        warn=warnings.append,
    )
    key = blocks.key(recipe=recipe, profile=profile, label=label)
    binding = (blocks, key, session)
    marker = _session_marker(cache, key, session)
    action = hook_delivery.delivery_action(call)
    if action == hook_delivery.RESET_LATER:
        cache.write_json(marker, {"reset": True, "event": call.event, "source": call.source})
        return Outcome(text=RESET_LATER_MESSAGE, block="none", line="read state reset"), binding
    reset = action != hook_delivery.STUBS
    if cache.read_json(marker) is not None:
        reset = True  # a compaction came since the last block (PreCompress)
    payload: dict[str, Any] = {"process": session, "reset": reset}
    if recipe:
        payload["recipe"] = recipe
    if profile:
        payload["profile"] = profile
    try:
        turn = blocks.turn(
            payload=payload,
            recipe=recipe,
            profile=profile,
            label=label,
            keep_pending=False,
            while_waiting=_import_signing,
            revalidate_later=True,  # after the output is written, with the bind (`_bind`)
        )
    except (NoCachedBlock, _Refused, Unavailable) as error:
        return Outcome(text=NOT_DELIVERED.format(why=error), block="none", line=str(error)), binding
    remaining = _remaining(args, started)
    why = verify_block(
        turn,
        session=http.Session(),  # the keys are public: no token goes with them
        cache=cache,
        url=str(args.url),
        tenant=str(tenant),
        project=str(project),
        timeout=remaining,
    )
    if why is not None:
        return Outcome(
            text=NOT_VERIFIED.format(why=why), block="refused", line=f"not verified: {why}"
        ), binding
    if cache.read_json(marker) is not None:
        (cache.folder / marker).unlink(missing_ok=True)
    relied = hook_delivery.relied_on(
        tool=call.tool, text=turn.text, files=synced_files(call.tool, args.dir, lock)
    )
    line = f"{action} block from the {turn.served_from}"
    if warnings:
        line += f" ({warnings[-1]})"
    return Outcome(
        text=relied.text, block=turn.served_from, line=line, turn=turn, relies_on=relied.files
    ), binding


def delivery_of(call: HookCall, outcome: Outcome, output: str) -> Delivery:
    received, _problems = hook_delivery.received_of(tool=call.tool, event=call.event, output=output)
    delivery: Delivery = {
        "tool": call.tool,
        "event": call.event,
        "source": call.source,
        "format": hook_delivery.output_format(call.tool, call.event),
        "bytes": len(output.encode("utf-8")),
        "sha256": hook_delivery.sha256_text(output),
        "output": output,
        "received": received,
        "block": outcome.block,
    }
    if outcome.relies_on:
        delivery["relies_on"] = outcome.relies_on
    return delivery


def _record(binding: Any, call: HookCall, outcome: Outcome, output: str) -> dict[str, Any]:
    """The binding record of what was written: the delivery, exact bytes and all."""
    _blocks, _key, session = binding
    record: dict[str, Any] = {
        "process": session,
        "manifest": {},
        "delivery": delivery_of(call, outcome, output),
    }
    if outcome.turn is not None:
        record["served_from"] = outcome.turn.served_from
        record["served_sha256"] = outcome.turn.sha256
    return record


def _bind(binding: Any, outcome: Outcome, record: dict[str, Any], timeout: float) -> str:
    """Upload the delivery's binding record within ``timeout``, or keep it for a later
    call; in words."""
    blocks, key, _session = binding
    blocks.timeout = timeout
    if outcome.block == "server":
        if outcome.turn is not None:
            # The cached block brought up to date, as `turn` does for other callers (a
            # resume's stubs are not the block a server down would get), before the
            # record: once the record is stored, the cache is current.
            blocks.refresh_unless_cached(key, outcome.turn.sha256)
        try:
            response = blocks.bind(record)
        except Unavailable:
            response = None
        if response is not None and response.status_code in (201, 422):
            return f"bound as record {response.json().get('id')}"
        if response is not None and response.status_code not in RETRY_LATER:
            return f"not bound (HTTP {response.status_code})"
    blocks.cache.add_pending(key, record)
    return "bound later (kept until the server answers)"


def _bind_in_background() -> bool:
    """Whether the bind is left to a detached child: where `os.fork` is had (not on
    Windows) and `AGENTDOCS_HOOK_BIND=wait` does not ask for it before the exit."""
    return hasattr(os, "fork") and os.environ.get(BIND_ENV) != "wait"


def _bind_detached(binding: Any, outcome: Outcome, record: dict[str, Any], timeout: float) -> None:
    """Bind in a child that outlives this process, so that the hook exits as soon as
    its output is written: the tool waits for the hook's exit and its pipes' close, not
    for the record. The child is a session of its own with stdin, stdout and stderr on
    /dev/null (the tool waits for every process holding its pipes), does what `_bind`
    does within ``timeout`` (a record it cannot upload is kept for a later call) and
    exits whatever happens."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        child = os.fork()
    except OSError:  # no process to spare: the record waits for a later call
        with contextlib.suppress(OSError):
            binding[0].cache.add_pending(binding[1], record)
        return
    if child != 0:
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        _bind(binding, outcome, record, timeout)
    finally:
        os._exit(0)


def run_context(args: argparse.Namespace, raw: bytes) -> int:
    """The hook: one JSON object on stdout, one line on stderr, exit 0; the binding
    record of what was written uploaded after the exit (`_bind_detached`), or before it
    with `AGENTDOCS_HOOK_BIND=wait`."""
    started = time.monotonic() - seconds_since_start()
    if args.tool not in CONTEXT_HOOKS:
        known = ", ".join(CONTEXT_HOOKS)
        write(
            sys.stderr,
            f"agentdocs: {args.tool!r} has no documented hook that adds context ({known})\n",
        )
        return 0
    call = hook_delivery.hook_call(args.tool, raw)
    binding = None
    try:
        outcome, binding = _deliver(args, call, started)
    except Exception as error:  # whatever it is, the session starts with a valid output
        why = f"{type(error).__name__}: {error}"
        outcome = Outcome(text=NOT_DELIVERED.format(why=why), block="none", line=why)
    output = hook_delivery.hook_output(tool=call.tool, event=call.event, text=outcome.text)
    write(sys.stdout, output)
    session = call.session or "(no session id)"
    line = f"agentdocs: {call.tool} {call.event} {call.source or '-'} {session}: {outcome.line}"
    if binding is None:
        write(sys.stderr, line + "\n")
        return 0
    background = outcome.block == "server" and _bind_in_background()
    try:
        record = _record(binding, call, outcome, output)
        if background:
            bound = "binding in the background"
        else:
            bound = _bind(binding, outcome, record, _remaining(args, started))
    except Exception as error:
        background = False
        bound = f"not bound: {type(error).__name__}: {error}"
    write(sys.stderr, f"{line}; {bound}\n")
    if background:
        _bind_detached(binding, outcome, record, _remaining(args, started))
    return 0
