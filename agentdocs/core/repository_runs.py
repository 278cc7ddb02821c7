"""A repository run: the files an agent tool loads from a repository, as a binding
record's `repository` section.

`agentdocs bind --repo DIR --tool TOOL` reads the files TOOL loads (in its order,
`agentdocs.core.targets.LoadingTool`), says where the tool's documented size limits cut
them (`cut_at`), and each file's state against `agentdocs.lock.json` and the server's
current export. The server checks the section strictly (`parse_repository`) and keeps,
for every in-sync file, the export's inputs, so that the file's text can be rebuilt
from history later.

Plain Python: the CLI imports it without Django.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict
from urllib.parse import urlsplit, urlunsplit

from agentdocs.core.agent_files import _parse_yaml, split_frontmatter
from agentdocs.core.bindings import BindingRecordData, Problem
from agentdocs.core.errors import InvalidInput, InvalidRemote
from agentdocs.core.export import Export, ExportFile, ExportSourceDict
from agentdocs.core.targets import TOOLS_BY_SLUG, Limit, LoadingTool
from agentdocs.core.tool_scoping import ScopedFrontmatter

IN_SYNC = "in-sync"
EDITED_LOCALLY = "edited-locally"
SERVER_CHANGED = "server-changed"
NOT_GENERATED = "not-generated"
STATES = (IN_SYNC, EDITED_LOCALLY, SERVER_CHANGED, NOT_GENERATED)
# What makes a repository bind exit 1 (with a cut file), as problems make `bind` do.
PROBLEM_STATES = frozenset({EDITED_LOCALLY, SERVER_CHANGED})
CUSTODY_GIT = "git"
CUSTODY_UNTRACKED = "untracked"

MAX_FILES = 500
MAX_TEXT = 2048  # a remote, a branch, a path, a glob
MAX_GLOBS = 100
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_GIT_ID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")  # SHA-1 or SHA-256 object ids


class GitCustody(TypedDict):
    remote: str | None
    commit: str | None
    blob: str
    dirty: bool


class RepositoryFile(TypedDict):
    """One file the tool loads: its hash and size as on disk, where the tool stops
    reading it (a byte offset; None when it reads the whole file), its custody and its
    state. ``globs``: a scoped rule's; ``export``: for an in-sync file, the server's."""

    path: str
    sha256: str
    bytes: int
    cut_at: int | None
    custody: str  # git or untracked
    git: NotRequired[GitCustody]
    state: str
    globs: NotRequired[list[str]]
    # An in-sync file's: the documents the server's export built it from.
    sources: NotRequired[list[ExportSourceDict]]


class RepositorySection(TypedDict):
    tool: str
    format: str
    remote: str | None
    commit: str | None
    branch: str | None
    dirty: bool
    files: list[RepositoryFile]
    # Filled in by the server: the export an in-sync file is part of (its sha256 and
    # the inputs it is rebuilt from), None when no file is in sync.
    export: NotRequired[dict[str, Any] | None]


def loading_tool(name: str) -> LoadingTool | None:
    """The tool ``name`` names: its slug (`claude-code`) or its export format
    (`claude-md`, what the session hooks and `agentdocs run` pass); None for neither."""
    return TOOLS_BY_SLUG.get(name) or next(
        (tool for tool in TOOLS_BY_SLUG.values() if tool.format == name), None
    )


# What the tool sees


def _byte_offset(text: str, characters: int) -> int:
    return len(text[:characters].encode("utf-8"))


def cut_points(tool: LoadingTool, files: Sequence[tuple[str, str]]) -> dict[str, int | None]:
    """Per ``(path, text)`` loaded in that order, the byte offset at which the tool's
    documented `cut` limits stop reading it; None when it reads it whole. A ``total``
    limit counts the files one after the other, a ``path`` limit the main file and the
    per-folder files (root first, as loaded): a file past it is cut at 0."""
    cuts: dict[str, int | None] = {path: None for path, _text in files}
    entry = tool.target
    for limit in tool.limits:
        if limit.effect != "cut":
            continue
        shared = limit.applies_to in ("total", "path")
        used = 0
        for path, text in files:
            if limit.applies_to == "main" and path != entry.main:
                continue
            if limit.applies_to == "path" and not (
                path == entry.main or tool.nested_folder(path) is not None
            ):
                continue
            room = limit.limit - used if shared else limit.limit
            cut = _cut_within(text, max(room, 0), limit)
            if shared:
                used += _size(text, limit)
            if cut is not None:
                previous = cuts[path]
                cuts[path] = cut if previous is None else min(previous, cut)
    return cuts


def _size(text: str, limit: Limit) -> int:
    return len(text.encode("utf-8")) if limit.unit == "bytes" else len(text)


def _cut_within(text: str, room: int, limit: Limit) -> int | None:
    if _size(text, limit) <= room:
        return None
    return room if limit.unit == "bytes" else _byte_offset(text, room)


def rule_scope(tool: LoadingTool, path: str, text: str) -> ScopedFrontmatter | None:
    """A rule file's scope (our `description`, `globs`, `alwaysApply`), read as its tool
    reads its frontmatter; None for a file that is not one of the tool's rule files."""
    entry = tool.target
    if path == entry.main or entry.rule_name(path) is None:
        return None
    raw, _head, _rest = split_frontmatter(text)
    metadata = _parse_yaml(raw).metadata if raw is not None else {}
    scoped, _notes = entry.scoping.read(metadata)
    return scoped


def rule_globs(tool: LoadingTool, path: str, text: str) -> list[str] | None:
    """The globs a rule file is scoped to, read as its tool reads its frontmatter;
    None for a file that is not scoped (the main file, or an always-applied rule)."""
    scoped = rule_scope(tool, path, text)
    globs = scoped.get("globs") if scoped is not None else None
    return list(globs) if globs else None


def file_state(*, local: str, locked: str | None, exported: str | None) -> str:
    """A loaded file's state: `in-sync` when it is the server's current export,
    `server-changed` when it is what the last sync wrote and the server moved on (or no
    longer exports it), `not-generated` when no sync wrote it and the server exports
    nothing there, `edited-locally` otherwise."""
    if local == exported:
        return IN_SYNC
    if locked is not None and local == locked:
        return SERVER_CHANGED
    if locked is None and exported is None:
        return NOT_GENERATED
    return EDITED_LOCALLY


# Remotes without credentials

_URL_FORM = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SSH_SCHEMES = frozenset({"ssh", "git+ssh", "ssh+git"})
_HOST_PUNCTUATION = frozenset("-._~")


def _bad_remote(detail: str, field: str) -> InvalidRemote:
    return InvalidRemote(f"`{field}`: {detail}", field=field)


def _host_is_valid(host: str) -> bool:
    """A host name (letters of any script, digits, `-._~`) or a bracketed IPv6 literal."""
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        return True
    return bool(host) and all(c.isalnum() or c in _HOST_PUNCTUATION for c in host)


def _clean_url(url: str, field: str) -> str:
    try:
        parts = urlsplit(url)
        host = parts.hostname  # lowercased; an IPv6 literal without its brackets
        port = parts.port  # ValueError for a port that is not a number of 0 to 65535
    except ValueError as error:
        raise _bad_remote(f"this remote cannot be read ({error}).", field) from None
    if not host:
        if parts.scheme.lower() == "file" and not parts.netloc:
            return urlunsplit((parts.scheme, "", parts.path, "", ""))
        raise _bad_remote("this remote names no host.", field)
    netloc = f"[{host}]" if ":" in host else host
    if not _host_is_valid(netloc):
        raise _bad_remote(f"{host!r} is not a host name.", field)
    if port == 0:
        raise _bad_remote("a port is a number from 1 to 65535.", field)
    if port is not None:
        netloc = f"{netloc}:{port}"
    if parts.scheme.lower() in _SSH_SCHEMES and parts.username and parts.password is None:
        netloc = f"{parts.username}@{netloc}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _scp_host(rest: str) -> tuple[str, str] | None:
    """``host:path`` split as git reads an scp-like remote (the host may be a bracketed
    IPv6 literal); None when ``rest`` is not one (no colon before a slash)."""
    if rest.startswith("["):
        end = rest.find("]:")
        if end < 0:
            return None
        return rest[: end + 1], rest[end + 2 :]
    host, colon, path = rest.partition(":")
    if not colon or "/" in host or "@" in host:
        return None
    return host, path


def _clean_scp_like(url: str, field: str) -> str:
    # `user[:password]@host:path`: the host follows the last `@` that a `host:` follows
    # (a password or a path may hold `@`, a password may hold `/`).
    for at in range(len(url) - 1, -1, -1):
        if url[at] != "@":
            continue
        rest = url[at + 1 :]
        found = _scp_host(rest)
        if found is None and rest.startswith("["):
            raise _bad_remote("this remote's IPv6 literal is not closed by `]:`.", field)
        if found is None:
            continue
        host, path = found
        if not _host_is_valid(host):
            raise _bad_remote(f"{host!r} is not a host name.", field)
        user, colon, _password = url[:at].partition(":")
        return f"{user}@{host}:{path}" if user and not colon else f"{host}:{path}"
    userinfo, sign, after = url.partition("@")
    if sign and ":" in userinfo and "/" not in userinfo:
        # `user:password@...` that git would read as host `user`: never keep the password.
        return after
    found = _scp_host(url)
    if found is not None and not _host_is_valid(found[0]):
        raise _bad_remote(f"{found[0]!r} is not a host name.", field)
    if found is None and url.startswith("["):
        raise _bad_remote("this remote's IPv6 literal is not closed by `]:`.", field)
    return url  # `host:path`, or a local path


def clean_remote(url: str | None, *, field: str = "remote") -> str | None:
    """``url`` without credentials, or None for none (docs/repositories.md#remotes).

    A URL (`scheme://...`) loses its `user:password@` (and a lone user of any scheme
    but ssh: an https user is often a token), its query and fragment; an ssh user without
    a password is kept (`ssh://git@host/...`). An scp-like remote (`[user@]host:path`)
    keeps a lone user (`git@host:org/repo`) and loses a user given with a password
    (`bob:pass@host:org/repo` is `host:org/repo`). A local path is kept as it is.

    Raises InvalidRemote naming ``field`` for a remote that cannot be read: a port that
    is not a number from 1 to 65535, no host, a host with characters no host holds, a
    broken IPv6 literal."""
    if not url:
        return None
    url = url.strip()
    if not url:
        return None
    if _URL_FORM.match(url):
        return _clean_url(url, field)
    return _clean_scp_like(url, field)


# The server's checks


def _fail(detail: str, field: str) -> InvalidInput:
    return InvalidInput(
        f"repository.{field}: {detail}" if field else f"repository: {detail}",
        field=f"repository.{field}" if field else "repository",
    )


def _text(data: dict[str, Any], key: str, *, field: str, nullable: bool) -> str | None:
    value = data.get(key)
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_TEXT:
        raise _fail(f"`{key}` must be a string of 1 to {MAX_TEXT} characters.", field)
    if "\x00" in value or "\n" in value:
        raise _fail(f"`{key}` must be one line.", field)
    return value


def _git_id(data: dict[str, Any], key: str, *, field: str, nullable: bool) -> str | None:
    value = data.get(key)
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not _GIT_ID.match(value):
        raise _fail(f"`{key}` must be a git object id (40 or 64 lowercase hex digits).", field)
    return value


def _bool(data: dict[str, Any], key: str, *, field: str) -> bool:
    value = data.get(key)
    if not isinstance(value, bool):
        raise _fail(f"`{key}` must be true or false.", field)
    return value


def _int(data: dict[str, Any], key: str, *, field: str, nullable: bool) -> int | None:
    value = data.get(key)
    if value is None and nullable:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 2**53:
        raise _fail(f"`{key}` must be a whole number of at least 0.", field)
    return value


def _keys(data: object, allowed: set[str], required: set[str], *, field: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _fail("must be an object.", field)
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise _fail(f"unknown field(s) {', '.join(map(repr, unknown))}.", field)
    missing = sorted(required - set(data))
    if missing:
        raise _fail(f"missing field(s) {', '.join(map(repr, missing))}.", field)
    return data


_SECTION_KEYS = {"tool", "remote", "commit", "branch", "dirty", "files"}
_FILE_KEYS = {"path", "sha256", "bytes", "cut_at", "custody", "git", "state", "globs"}
_GIT_KEYS = {"remote", "commit", "blob", "dirty"}


def parse_repository(data: object) -> RepositorySection:
    """The `repository` section a client sent, checked field by field (InvalidInput
    naming `repository.<field>`); the remote is cleaned of credentials again."""
    section = _keys(data, _SECTION_KEYS, _SECTION_KEYS, field="")
    slug = section.get("tool")
    tool = loading_tool(slug) if isinstance(slug, str) else None
    if tool is None:
        raise _fail(f"`tool` must be one of {', '.join(TOOLS_BY_SLUG)}.", "tool")
    files = section["files"]
    if not isinstance(files, list) or len(files) > MAX_FILES:
        raise _fail(f"`files` must be a list of at most {MAX_FILES} files.", "files")
    parsed_files: list[RepositoryFile] = []
    seen: set[str] = set()
    for index, raw in enumerate(files):
        parsed = _parse_file(raw, tool=tool, field=f"files[{index}]")
        if parsed["path"] in seen:
            raise _fail(f"{parsed['path']!r} is listed twice.", f"files[{index}].path")
        seen.add(parsed["path"])
        parsed_files.append(parsed)
    return {
        "tool": tool.slug,
        "format": tool.format,
        "remote": clean_remote(
            _text(section, "remote", field="remote", nullable=True), field="repository.remote"
        ),
        "commit": _git_id(section, "commit", field="commit", nullable=True),
        "branch": _text(section, "branch", field="branch", nullable=True),
        "dirty": _bool(section, "dirty", field="dirty"),
        "files": parsed_files,
    }


def _parse_file(raw: object, *, tool: LoadingTool, field: str) -> RepositoryFile:
    data = _keys(raw, _FILE_KEYS, _FILE_KEYS - {"git", "globs"}, field=field)
    path = _text(data, "path", field=f"{field}.path", nullable=False)
    assert path is not None
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    if path not in tool.load_order([path], folder):
        raise _fail(f"{tool.slug} does not load {path!r}.", f"{field}.path")
    sha256 = data.get("sha256")
    if not isinstance(sha256, str) or not _SHA256.match(sha256):
        raise _fail("`sha256` must be 64 lowercase hex digits.", f"{field}.sha256")
    size = _int(data, "bytes", field=f"{field}.bytes", nullable=False)
    assert size is not None
    cut_at = _int(data, "cut_at", field=f"{field}.cut_at", nullable=True)
    if cut_at is not None and cut_at >= size:
        raise _fail("`cut_at` must be below `bytes` (null: read whole).", f"{field}.cut_at")
    state = data.get("state")
    if state not in STATES:
        raise _fail(f"`state` must be one of {', '.join(STATES)}.", f"{field}.state")
    custody = data.get("custody")
    entry: RepositoryFile = {
        "path": path,
        "sha256": sha256,
        "bytes": size,
        "cut_at": cut_at,
        "custody": CUSTODY_GIT,
        "state": state,
    }
    if custody == CUSTODY_GIT:
        git = _keys(data.get("git"), _GIT_KEYS, _GIT_KEYS, field=f"{field}.git")
        entry["git"] = {
            "remote": clean_remote(
                _text(git, "remote", field=f"{field}.git.remote", nullable=True),
                field=f"repository.{field}.git.remote",
            ),
            "commit": _git_id(git, "commit", field=f"{field}.git.commit", nullable=True),
            "blob": _git_id(git, "blob", field=f"{field}.git.blob", nullable=False) or "",
            "dirty": _bool(git, "dirty", field=f"{field}.git.dirty"),
        }
    elif custody == CUSTODY_UNTRACKED:
        if data.get("git") is not None:
            raise _fail("an untracked file has no `git`.", f"{field}.git")
        entry["custody"] = CUSTODY_UNTRACKED
    else:
        raise _fail("`custody` must be git or untracked.", f"{field}.custody")
    globs = data.get("globs")
    if globs is not None:
        if (
            not isinstance(globs, list)
            or len(globs) > MAX_GLOBS
            or not all(isinstance(g, str) and 0 < len(g) <= MAX_TEXT for g in globs)
        ):
            raise _fail(
                f"`globs` must be a list of at most {MAX_GLOBS} non-empty strings.",
                f"{field}.globs",
            )
        entry["globs"] = list(globs)
    return entry


def file_problems(section: RepositorySection) -> list[Problem]:
    """A problem per loaded file that is not what the server exports (edited since the
    sync, or the server moved on) and per file the tool cuts."""
    problems: list[Problem] = []
    for entry in section["files"]:
        path = entry["path"]
        if entry["state"] == EDITED_LOCALLY:
            detail = "The file differs from what agentdocs sync wrote and from the export."
            problems.append({"kind": "edited_locally", "path": path, "detail": detail})
        elif entry["state"] == SERVER_CHANGED:
            detail = "The server's export changed since the last sync: run agentdocs sync."
            problems.append({"kind": "server_changed", "path": path, "detail": detail})
        if entry["cut_at"] is not None:
            detail = (
                f"{section['tool']} reads the first {entry['cut_at']:,} of its "
                f"{entry['bytes']:,} bytes; the rest never reaches the model."
            )
            problems.append({"kind": "cut_by_tool", "path": path, "detail": detail})
    return problems


class RepositoryRecordData(BindingRecordData):
    """A binding record of a repository run."""

    repository: RepositorySection


def with_repository(record: BindingRecordData, section: RepositorySection) -> BindingRecordData:
    """``record`` with its repository section and the section's problems."""
    problems = [*record["problems"], *file_problems(section)]
    extended: RepositoryRecordData = {
        **record,
        "repository": section,
        "problems": problems,
        "problem_count": len(problems),
    }
    return extended


# Reading a record back


def _elsewhere(entry: RepositoryFile) -> str:
    """Where a file that was not the server's export can be had from."""
    what = (
        "It was edited locally"
        if entry["state"] == EDITED_LOCALLY
        else (f"It was {entry['state']} when bound, not the server's export")
    )
    git = entry.get("git")
    if git is None:
        return f"{what} and untracked by git: it cannot be restored."
    if git["dirty"]:
        return (
            f"{what}, with changes not committed to git: only its committed version can "
            f"be restored, from git (`git cat-file -p {git['blob']}`), and it is not this text."
        )
    return f"{what}: it can only be restored from git: `git cat-file -p {git['blob']}`."


def restore_repository_file(entry: RepositoryFile, rebuilt: Export | str | None) -> dict[str, Any]:
    """One file of a repository section restored: an in-sync file's text from the export
    rebuilt from history (``rebuilt``, or a sentence saying why it could not be),
    verified by its sha256; any other file, where to get it."""
    git = entry.get("git")
    result: dict[str, Any] = {
        "kind": "repository",
        "path": entry["path"],
        "state": entry["state"],
        "sha256": entry["sha256"],
        "custody": entry["custody"],
        "blob": git["blob"] if git else None,
        "restored": False,
        "verified": False,
        "body": None,
    }
    if entry["state"] != IN_SYNC:
        return {**result, "detail": _elsewhere(entry)}
    if isinstance(rebuilt, str) or rebuilt is None:
        return {**result, "detail": rebuilt or "The bound export cannot be rebuilt."}
    file = rebuilt.file(entry["path"])
    if file is None or file.sha256 != entry["sha256"]:
        return {
            **result,
            "detail": "The export rebuilt from the bound versions does not match the "
            "recorded sha256.",
        }
    return {**result, "restored": True, "verified": True, "body": file.content, "detail": ""}


def repository_outdated_row(entry: RepositoryFile, now: ExportFile | None) -> dict[str, Any]:
    """One file against the server's export of it now: `current` (the same text),
    `changed`, or `deleted` (no longer exported); a file that was not the server's
    export when bound keeps its state as its status."""
    bound = {"sha256": entry["sha256"], "state": entry["state"]}
    current = {"sha256": now.sha256} if now is not None else None
    row: dict[str, Any] = {
        "kind": "repository",
        "path": entry["path"],
        "bound": bound,
        "current": current,
    }
    if entry["state"] != IN_SYNC:
        return {**row, "status": entry["state"], "detail": _elsewhere(entry)}
    if now is None:
        return {**row, "status": "deleted", "detail": "The server no longer exports this file."}
    if now.sha256 != entry["sha256"]:
        return {**row, "status": "changed", "detail": "The server's export of it changed."}
    return {**row, "status": "current", "detail": ""}


def compare_repository_files(
    a: RepositorySection | None, b: RepositorySection | None
) -> list[dict[str, Any]]:
    """The files of two repository runs that differ: added, removed or changed (another
    sha256, state or cut)."""

    def view(entry: RepositoryFile | None) -> dict[str, Any] | None:
        if entry is None:
            return None
        return {"sha256": entry["sha256"], "state": entry["state"], "cut_at": entry["cut_at"]}

    files_a = {f["path"]: f for f in (a["files"] if a else [])}
    files_b = {f["path"]: f for f in (b["files"] if b else [])}
    changes = []
    for path in [*files_a, *(p for p in files_b if p not in files_a)]:
        left, right = view(files_a.get(path)), view(files_b.get(path))
        if left == right:
            continue
        status = "added" if left is None else "removed" if right is None else "changed"
        changes.append(
            {"kind": "repository", "path": path, "status": status, "a": left, "b": right}
        )
    return changes
