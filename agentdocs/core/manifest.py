"""The manifest: what a project selects as the context of its runs.

Its JSON shape is `ManifestData` (as in the seed)::

    {
      "context": [{"name": "workstation/agent-baseline", "standing": "rule"}],
      "local": ["AGENTS.md"],
      "exceptions": [{"target": "workstation/agent-baseline#deployment",
                      "effect": "narrow", "reason": "..."}]
    }

It arrives as untrusted JSON (the project's ``context.json`` or a request), so
`parse_manifest` takes any decoded value and returns a `Manifest`.

Validation is about shape: a wrong type, a missing key, a duplicate or a bad
path is an error naming the entry (``context[2].standing``). A standing or an
effect outside the known words is not a shape error: the binding records it and
refuses what depends on it, because a record is evidence of what was declared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from agentdocs.core.errors import InvalidInput, InvalidSkill
from agentdocs.core.paths import validate_name, validate_path
from agentdocs.core.skills import validate_skill_name

STANDINGS = ("rule", "default", "knowledge", "option")
MAX_SOURCES = 500
MAX_EXCEPTIONS = 500
MAX_REASON = 1000
SYMBOLIC_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*\Z")
MAX_NAME = 200
# A context entry `skill/<name>` selects a skill (issue 37), as the seed's `skill/handoff`.
SKILL_ENTRY_PREFIX = "skill/"


class ContextEntryData(TypedDict):
    name: str
    standing: str


class ExceptionData(TypedDict):
    target: str  # "name#section"
    effect: str
    reason: str


class ManifestData(TypedDict):
    """A manifest as JSON; every list may be left out."""

    context: NotRequired[list[ContextEntryData]]
    local: NotRequired[list[str]]
    exceptions: NotRequired[list[ExceptionData]]


class ManifestError(ValueError):
    """An invalid manifest; ``entry`` names where, for example ``exceptions[0].target``."""

    def __init__(self, detail: str, *, entry: str | None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.entry = entry


@dataclass(frozen=True)
class ContextEntry:
    name: str
    standing: str

    @property
    def has_known_standing(self) -> bool:
        return self.standing in STANDINGS


@dataclass(frozen=True)
class DeclaredException:
    target: str
    name: str
    section: str
    effect: str
    reason: str


@dataclass(frozen=True)
class Manifest:
    context: tuple[ContextEntry, ...]
    local: tuple[str, ...]
    exceptions: tuple[DeclaredException, ...]

    def standing_of(self, name: str) -> str | None:
        for entry in self.context:
            if entry.name == name:
                return entry.standing
        return None


def skill_entry_name(name: str) -> str | None:
    """The skill a context entry ``skill/<name>`` selects (a skill the project offers,
    its own or its tenant's, when the provider map does not name it), or None for a
    name that is not one."""
    if not name.startswith(SKILL_ENTRY_PREFIX):
        return None
    skill = name[len(SKILL_ENTRY_PREFIX) :]
    try:
        return validate_skill_name(skill)
    except InvalidSkill:
        return None


def validate_symbolic_name(name: object, *, entry: str | None = "name") -> str:
    """A provider name: segments of letters, digits, '.', '_' or '-' joined by '/'."""
    if not isinstance(name, str) or not name:
        raise ManifestError("The name must be a non-empty string.", entry=entry)
    if len(name) > MAX_NAME:
        raise ManifestError(f"The name is longer than {MAX_NAME} characters.", entry=entry)
    if not SYMBOLIC_NAME.match(name):
        raise ManifestError(
            f"{name!r} is not a symbolic name: use segments of letters, digits, '.', '_' "
            "or '-' joined by '/', as in 'workstation/agent-baseline'.",
            entry=entry,
        )
    return name


def _object(value: object, *, entry: str, keys: set[str], required: set[str]) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ManifestError("Must be a JSON object.", entry=entry)
    unknown = sorted(set(value) - keys)
    if unknown:
        raise ManifestError(
            f"Unknown key {unknown[0]!r}; allowed: {', '.join(sorted(keys))}.",
            entry=f"{entry}.{unknown[0]}",
        )
    for key in sorted(required):
        if key not in value:
            raise ManifestError(f"{key!r} is required.", entry=f"{entry}.{key}")
    return value


def _list(value: object, *, entry: str, limit: int) -> list[object]:
    if not isinstance(value, list):
        raise ManifestError("Must be a JSON array.", entry=entry)
    if len(value) > limit:
        raise ManifestError(f"At most {limit} entries are allowed.", entry=entry)
    return value


def _string(value: object, *, entry: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ManifestError("Must be a non-empty string.", entry=entry)
    return value


def _context_entry(value: object, *, entry: str) -> ContextEntry:
    data = _object(value, entry=entry, keys={"name", "standing"}, required={"name", "standing"})
    name = validate_symbolic_name(data["name"], entry=f"{entry}.name")
    standing = _string(data["standing"], entry=f"{entry}.standing")
    return ContextEntry(name=name, standing=standing)


def _local_path(value: object, *, entry: str) -> str:
    try:
        return validate_path(value)
    except InvalidInput as error:
        raise ManifestError(error.detail, entry=entry) from None


def _exception(value: object, *, entry: str) -> DeclaredException:
    data = _object(
        value,
        entry=entry,
        keys={"target", "effect", "reason"},
        required={"target", "effect", "reason"},
    )
    target = _string(data["target"], entry=f"{entry}.target")
    name, hash_sign, section = target.partition("#")
    if not hash_sign or not name or not section.strip():
        raise ManifestError(
            f"The target {target!r} must be 'name#section', "
            "for example 'workstation/agent-baseline#deployment'.",
            entry=f"{entry}.target",
        )
    effect = _string(data["effect"], entry=f"{entry}.effect")
    reason = _string(data["reason"], entry=f"{entry}.reason")
    if len(reason) > MAX_REASON:
        raise ManifestError(
            f"The reason is longer than {MAX_REASON} characters.", entry=f"{entry}.reason"
        )
    return DeclaredException(
        target=target, name=name, section=section, effect=effect, reason=reason
    )


def parse_manifest(decoded: object) -> Manifest:
    """Validate a decoded manifest (`ManifestData` when valid) and return it, or raise
    ManifestError naming the entry."""
    data = _object(
        decoded, entry="manifest", keys={"context", "local", "exceptions"}, required=set()
    )
    context = [
        _context_entry(item, entry=f"context[{i}]")
        for i, item in enumerate(_list(data.get("context", []), entry="context", limit=MAX_SOURCES))
    ]
    local = [
        _local_path(item, entry=f"local[{i}]")
        for i, item in enumerate(_list(data.get("local", []), entry="local", limit=MAX_SOURCES))
    ]
    exceptions = [
        _exception(item, entry=f"exceptions[{i}]")
        for i, item in enumerate(
            _list(data.get("exceptions", []), entry="exceptions", limit=MAX_EXCEPTIONS)
        )
    ]
    _refuse_duplicates([entry.name for entry in context], what="name", list_name="context")
    _refuse_duplicates(local, what="path", list_name="local")
    if len(context) + len(local) > MAX_SOURCES:
        raise ManifestError(
            f"A manifest selects at most {MAX_SOURCES} sources in all.", entry="manifest"
        )
    return Manifest(context=tuple(context), local=tuple(local), exceptions=tuple(exceptions))


def _refuse_duplicates(values: list[str], *, what: str, list_name: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            suffix = ".name" if what == "name" else ""
            raise ManifestError(
                f"The {what} {value!r} is listed twice; each source is selected once.",
                entry=f"{list_name}[{index}]{suffix}",
            )
        seen.add(value)


def validate_provider_name(name: object) -> str:
    """A provider map entry's name: a symbolic name a manifest can give, with no
    character the name check refuses; InvalidInput naming `name`."""
    if isinstance(name, str):
        validate_name(name, field="name", what="The name")
    try:
        return validate_symbolic_name(name, entry="name")
    except ManifestError as error:
        raise InvalidInput(error.detail, field="name") from None
