"""MCP's Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): the skills a
project offers as `skill://<name>/<path>` resources, `skills/list` and `skills/get`.

Each entry is the extension's `Skill`: the URI of its `SKILL.md`, the frontmatter as a
JSON object, and a complete manifest of its files (`resources`), each with its URI, its
`sha256:<hex>` digest and its size in bytes. The files themselves are read with
`resources/read` (`agentdocs.mcp.server`). No `resources/directory/read` is served, so
the capability declares no `directoryRead`.

Plain functions over the backend's skills (`SkillsApi`): the web app's `/mcp/` answers
`skills/list` and `skills/get` with them, and only that server declares the extension.

A `skills/get` that names the reading process is recorded as the `read_skill` tool's
read is: the process is `params._meta["io.agentdocs/process"]`, else the session's own
id (the client's `Mcp-Session-Id`, the process its session start was bound as). The
record's id comes back in the result's `_meta["io.agentdocs/record"]`.
"""

from __future__ import annotations

import json
from typing import Any, Protocol
from urllib.parse import quote, unquote, urlsplit

from frontmatter import YAMLHandler

from agentdocs.core.agent_files import split_frontmatter
from agentdocs.mcp.api import SkillText

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
# Where a `skills/get` names its process, and where its answer names the record.
PROCESS_META = "io.agentdocs/process"
RECORD_META = "io.agentdocs/record"
SKILLS_METHODS = frozenset({"skills/list", "skills/get"})
SCHEME = "skill://"
SKILL_FILE = "SKILL.md"
# How long a host may treat a listing or an entry as current, and for whom: the
# answer is the caller's (its access), so no shared cache may keep it.
TTL_MS = 60_000
CACHE_SCOPE = "private"
_YAML = YAMLHandler()


class SkillsApi(Protocol):
    """What the extension reads: the skills offered, with their files."""

    def skills_offered(self) -> list[SkillText]: ...

    def skill(self, name: str, process: str | None = None) -> SkillText: ...


class UnknownSkill(LookupError):
    """`skills/get` of a URI that names no skill served here: -32602."""


def skill_uri(name: str, path: str = SKILL_FILE) -> str:
    return f"{SCHEME}{name}/{quote(path, safe='/')}"


def parse_skill_uri(uri: str) -> tuple[str, str] | None:
    """``(name, path)`` of a `skill://<name>/<path>` URI, else None."""
    if not uri.startswith(SCHEME):
        return None
    parts = urlsplit(uri)
    if parts.query or parts.fragment or not parts.netloc or not parts.path.startswith("/"):
        return None
    path = unquote(parts.path[1:])
    if not path or any(segment in ("", ".", "..") for segment in path.split("/")):
        return None
    return parts.netloc, path


def frontmatter_of(text: str) -> dict[str, Any]:
    """`SKILL.md`'s YAML frontmatter as a JSON object (checked when the skill was
    written: a mapping with `name` and `description`)."""
    raw, _head, _body = split_frontmatter(text)
    meta = _YAML.load(raw) if raw is not None else {}
    if not isinstance(meta, dict):
        return {}
    # YAML's dates and the like, as the JSON text they would be written as.
    loaded: dict[str, Any] = json.loads(json.dumps(meta, default=str))
    return loaded


def skill_entry(skill: SkillText) -> dict[str, Any]:
    """The extension's `Skill` entry: `uri`, `frontmatter`, `resources` (every file)."""
    files = {file["path"]: file for file in skill["files"]}
    return {
        "uri": skill_uri(skill["name"]),
        "frontmatter": frontmatter_of(files[SKILL_FILE]["content"]) if SKILL_FILE in files else {},
        "resources": [
            {
                "uri": skill_uri(skill["name"], path),
                "digest": f"sha256:{files[path]['sha256']}",
                "size": files[path]["size"],
            }
            for path in sorted(files, key=lambda p: (p != SKILL_FILE, p))
        ],
    }


def skills_list(api: SkillsApi) -> dict[str, Any]:
    """`skills/list`: every skill offered, complete, on one page."""
    return {
        "resultType": "complete",
        "skills": [skill_entry(skill) for skill in api.skills_offered()],
        "ttlMs": TTL_MS,
        "cacheScope": CACHE_SCOPE,
    }


def process_of(params: Any) -> str | None:
    """The process a request names in its `_meta` (``io.agentdocs/process``), if any."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    process = meta.get(PROCESS_META) if isinstance(meta, dict) else None
    return process if isinstance(process, str) else None


def skills_get(api: SkillsApi, params: Any, *, process: str | None = None) -> dict[str, Any]:
    """`skills/get`: the entry of the skill whose `SKILL.md` is ``params.uri``, its read
    recorded for ``process`` when given; UnknownSkill (the caller answers -32602) for
    any other URI."""
    uri = params.get("uri") if isinstance(params, dict) else None
    if not isinstance(uri, str):
        raise UnknownSkill("`params.uri` is required: the URI of a skill's SKILL.md.")
    parsed = parse_skill_uri(uri)
    if parsed is None or parsed[1] != SKILL_FILE:
        raise UnknownSkill(f"Not the URI of a skill's SKILL.md: {uri}")
    skill = api.skill(parsed[0], process)
    result: dict[str, Any] = {
        "resultType": "complete",
        "skill": skill_entry(skill),
        "ttlMs": TTL_MS,
        "cacheScope": CACHE_SCOPE,
    }
    if skill["record"] is not None:
        result["_meta"] = {RECORD_META: skill["record"]}
    return result
