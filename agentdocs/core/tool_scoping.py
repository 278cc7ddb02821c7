"""How each agent tool's frontmatter says where a rule applies: written on export, read
back on import.

Our `.AGENTS/` documents say it with `description`, `globs` and `alwaysApply`
(`agentdocs.core.scope`). Each tool has its own words for the same three cases, a rule
that always applies, one for files matching globs, and one the agent (or the person)
picks by its description:

- cursor: always ``alwaysApply: true``; globs ``globs: a,b`` (unquoted); otherwise
  ``alwaysApply: false``;
- copilot: always in the main file; globs ``applyTo: "a,b"``; otherwise no ``applyTo``;
- claude: always in the main file; globs a ``paths:`` list; otherwise inlined in the main file;
- trigger (Windsurf, Antigravity): ``trigger: always_on``; ``trigger: glob`` with ``globs``;
  ``model_decision`` (with a description) or ``manual``;
- kiro: ``inclusion: always``; ``inclusion: fileMatch`` with ``fileMatchPattern``; ``auto``
  (with a description) or ``manual``;
- cline: always no frontmatter; globs a ``paths:`` list; otherwise inlined in the main file;
- continue: ``alwaysApply: true``; a ``globs:`` list; otherwise ``alwaysApply: false``;
- augment: ``type: always_apply``; globs inlined in the main file; ``agent_requested``
  (with a description) or ``manual``;
- codebuddy: always in the main file; globs a ``paths:`` list with ``alwaysApply: false``;
  otherwise inlined in the main file;
- aiassistant (JetBrains AI Assistant, `field: value` lines, not YAML): ``apply: always``;
  ``apply: by file patterns`` with ``patterns: a, b``; ``apply: by model decision``
  with ``instructions:`` (the description) or ``apply: manually``;
- none: everything in the main file.

A writer returns None for a document its tool cannot scope: the export then keeps the
document in the tool's main file, under a heading that names its globs, as for the
single-file tools. A reader maps a tool's frontmatter back to ours, with notes on what
it could not take over.

Plain Python: the export, the import and the CLI use it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict


class ScopedFrontmatter(TypedDict, total=False):
    """Our frontmatter of a `.AGENTS/` document, in the order it is written."""

    description: str
    globs: list[str]
    alwaysApply: bool


@dataclass(frozen=True)
class Raw:
    """A frontmatter value written as it is, unquoted (Cursor's and Windsurf's
    comma-separated `globs`, as their own files hold them)."""

    text: str


FieldValue = str | bool | Raw | tuple[str, ...]
Fields = list[tuple[str, FieldValue]]


@dataclass(frozen=True)
class RuleScope:
    """What a writer needs to know about one document: its name (the file's stem), the
    path it comes from, its description, its globs as tools take them (negations
    dropped) and whether it always applies."""

    name: str
    path: str
    description: str | None
    globs: tuple[str, ...]
    always_apply: bool


# Writing


def _yaml_string(value: str) -> str:
    # A JSON string is a YAML double-quoted scalar; the two line separators YAML would
    # fold are escaped as well.
    return (
        json.dumps(value, ensure_ascii=False)
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _yaml_value(value: FieldValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, tuple):
        return "".join(f"\n  - {_yaml_string(item)}" for item in value)
    return _yaml_string(value)


def render_frontmatter(fields: Fields) -> str:
    """The frontmatter block of ``fields`` (nothing when there are none)."""
    if not fields:
        return ""
    # A list starts on the next line (`key:` then `  - item` lines).
    lines = [
        f"{key}:{_yaml_value(value)}"
        if isinstance(value, tuple)
        else f"{key}: {_yaml_value(value)}"
        for key, value in fields
    ]
    return "---\n" + "\n".join(lines) + "\n---\n"


def _raw_globs(globs: tuple[str, ...]) -> Raw | None:
    # A comma inside a pattern (`{a,b}`) would split it: such a pattern cannot be said
    # unquoted, so it is left out rather than written as two wrong ones.
    kept = [glob for glob in globs if "," not in glob and glob.strip() == glob]
    return Raw(",".join(kept)) if kept else None


def _description(scope: RuleScope) -> Fields:
    return [("description", scope.description)] if scope.description else []


def write_cursor(scope: RuleScope) -> Fields | None:
    fields: Fields = _description(scope)
    if not scope.always_apply:
        globs = _raw_globs(scope.globs)
        if globs is not None:
            fields.append(("globs", globs))
    fields.append(("alwaysApply", scope.always_apply))
    return fields


def write_copilot(scope: RuleScope) -> Fields | None:
    fields: Fields = []
    if scope.globs:
        fields.append(("applyTo", ",".join(scope.globs)))
    return fields + _description(scope)


def write_claude(scope: RuleScope) -> Fields | None:
    if not scope.globs:
        return None
    return [("paths", scope.globs), *_description(scope)]


def write_trigger(scope: RuleScope) -> Fields | None:
    if scope.always_apply:
        return [("trigger", "always_on"), *_description(scope)]
    globs = _raw_globs(scope.globs)
    if globs is not None:
        return [("trigger", "glob"), ("globs", globs), *_description(scope)]
    if scope.description:
        return [("trigger", "model_decision"), ("description", scope.description)]
    return [("trigger", "manual")]


def write_kiro(scope: RuleScope) -> Fields | None:
    if scope.always_apply:
        return [("inclusion", "always"), *_description(scope)]
    if scope.globs:
        pattern: FieldValue = scope.globs[0] if len(scope.globs) == 1 else scope.globs
        return [("inclusion", "fileMatch"), ("fileMatchPattern", pattern), *_description(scope)]
    if scope.description:
        return [("inclusion", "auto"), ("name", scope.name), ("description", scope.description)]
    return [("inclusion", "manual")]


def write_cline(scope: RuleScope) -> Fields | None:
    if scope.always_apply:
        return _description(scope)
    if scope.globs:
        return [*_description(scope), ("paths", scope.globs)]
    return None


def write_continue(scope: RuleScope) -> Fields | None:
    fields: Fields = [("name", scope.name), *_description(scope)]
    if not scope.always_apply and scope.globs:
        fields.append(("globs", scope.globs))
    fields.append(("alwaysApply", scope.always_apply))
    return fields


def write_augment(scope: RuleScope) -> Fields | None:
    if scope.always_apply:
        return [("type", "always_apply"), *_description(scope)]
    if scope.globs:
        return None
    if scope.description:
        return [("type", "agent_requested"), ("description", scope.description)]
    return [("type", "manual")]


def write_none(scope: RuleScope) -> Fields | None:
    return None


# Reading


def pattern_list(value: object) -> list[str] | None:
    """Patterns from a comma-separated string or a list; None when it is neither."""
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = list(value)
    else:
        return None
    return [item.strip() for item in items if item.strip()]


def as_bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


# Copilot's and Kiro's way of saying "every file": the rule always applies.
_EVERY_FILE = frozenset({"**", "**/*", "*"})


class _Reader:
    """Fills our frontmatter from one tool's fields, noting what it cannot take."""

    def __init__(self, metadata: dict[str, object]) -> None:
        self.metadata = metadata
        self.ours = ScopedFrontmatter()
        self.notes: list[str] = []
        self.known: set[str] = set()

    def description(self, key: str = "description") -> None:
        self.known.add(key)
        description = self.metadata.get(key)
        if isinstance(description, str | int | float) and not isinstance(description, bool):
            if str(description).strip():
                self.ours["description"] = str(description).strip()
        elif description is not None:
            self.notes.append(f"`{key}` is not text; not imported")

    def globs(self, key: str) -> list[str]:
        self.known.add(key)
        globs = pattern_list(self.metadata.get(key))
        if globs is None:
            self.notes.append(f"`{key}` is not a string or a list of strings; not imported")
            return []
        return globs

    def set_globs(self, globs: list[str]) -> None:
        if globs and set(globs) <= _EVERY_FILE:
            self.ours["alwaysApply"] = True
        elif globs:
            self.ours["globs"] = globs

    def choice(self, key: str, always: str, known: tuple[str, ...]) -> str | None:
        """The value of ``key`` among ``known`` (None when absent), noting any other."""
        self.known.add(key)
        value = self.metadata.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or value not in known:
            self.notes.append(f"`{key}: {value}` is not one of {', '.join(known)}; not imported")
            return None
        if value == always:
            self.ours["alwaysApply"] = True
        return value

    def ignore(self, *keys: str) -> None:
        self.known.update(keys)

    def done(self) -> tuple[ScopedFrontmatter, list[str]]:
        # Written in our order: description, globs, alwaysApply.
        ordered = ScopedFrontmatter()
        for key in ("description", "globs", "alwaysApply"):
            if key in self.ours:
                ordered[key] = self.ours[key]
        dropped = sorted(key for key in self.metadata if key not in self.known)
        if dropped:
            self.notes.append(f"frontmatter not imported: {', '.join(dropped)}")
        return ordered, self.notes


def _always_apply(reader: _Reader, key: str = "alwaysApply") -> None:
    reader.known.add(key)
    if reader.metadata.get(key) is None:
        return
    value = as_bool(reader.metadata[key])
    if value is None:
        reader.notes.append(f"`{key}` is not true or false; not imported")
    else:
        reader.ours["alwaysApply"] = value


Reading = tuple[ScopedFrontmatter, list[str]]


def read_cursor(metadata: dict[str, object]) -> Reading:
    reader = _Reader(metadata)
    reader.description()
    globs = reader.globs("globs")
    if globs:
        reader.ours["globs"] = globs
    _always_apply(reader)
    return reader.done()


def read_copilot(metadata: dict[str, object]) -> Reading:
    """`applyTo` (comma-separated) becomes `globs`; `applyTo: "**"` means every file.
    Without `applyTo` Copilot applies the file only when it is attached by hand."""
    reader = _Reader(metadata)
    reader.description()
    if metadata.get("applyTo") is None:
        reader.known.add("applyTo")
        reader.ours["alwaysApply"] = False
    else:
        reader.set_globs(reader.globs("applyTo"))
    return reader.done()


def read_paths(metadata: dict[str, object]) -> Reading:
    """Claude Code's and Cline's `paths` list; Cline's `alwaysApply` too."""
    reader = _Reader(metadata)
    reader.description()
    reader.set_globs(reader.globs("paths"))
    _always_apply(reader)
    return reader.done()


def read_trigger(metadata: dict[str, object]) -> Reading:
    reader = _Reader(metadata)
    reader.description()
    trigger = reader.choice(
        "trigger", "always_on", ("always_on", "glob", "model_decision", "manual")
    )
    globs = reader.globs("globs")
    if trigger in ("glob", None) and globs:
        reader.ours["globs"] = globs
    if trigger in ("model_decision", "manual"):
        reader.ours["alwaysApply"] = False
    return reader.done()


def read_kiro(metadata: dict[str, object]) -> Reading:
    reader = _Reader(metadata)
    reader.description()
    reader.ignore("name")
    inclusion = reader.choice("inclusion", "always", ("always", "fileMatch", "auto", "manual"))
    globs = reader.globs("fileMatchPattern")
    if inclusion == "fileMatch":
        reader.set_globs(globs)
    if inclusion in ("auto", "manual"):
        reader.ours["alwaysApply"] = False
    return reader.done()


def read_continue(metadata: dict[str, object]) -> Reading:
    reader = _Reader(metadata)
    reader.description()
    reader.ignore("name")
    globs = reader.globs("globs")
    if globs:
        reader.ours["globs"] = globs
    _always_apply(reader)
    return reader.done()


def read_augment(metadata: dict[str, object]) -> Reading:
    reader = _Reader(metadata)
    reader.description()
    kind = reader.choice("type", "always_apply", ("always_apply", "agent_requested", "manual"))
    if kind in ("agent_requested", "manual"):
        reader.ours["alwaysApply"] = False
    return reader.done()


def read_none(metadata: dict[str, object]) -> Reading:
    reader = _Reader(metadata)
    return reader.done()


@dataclass(frozen=True)
class ScopingStyle:
    """One tool family's way of scoping a rule: its name (as the formats list shows
    it), what it says in words, its writer and its reader. ``line_fields``: the tool's
    block is `field: value` lines, not YAML (each value read as it is written)."""

    name: str
    summary: str
    write: Callable[[RuleScope], Fields | None]
    read: Callable[[dict[str, object]], Reading]
    line_fields: bool = False


CURSOR = ScopingStyle(
    "cursor", "description, globs (comma-separated), alwaysApply", write_cursor, read_cursor
)
COPILOT = ScopingStyle(
    "copilot", "applyTo (comma-separated), description", write_copilot, read_copilot
)
CLAUDE = ScopingStyle("claude", "paths (a list)", write_claude, read_paths)
TRIGGER = ScopingStyle(
    "trigger",
    "trigger (always_on, glob, model_decision, manual), globs",
    write_trigger,
    read_trigger,
)
KIRO = ScopingStyle(
    "kiro", "inclusion (always, fileMatch, auto, manual), fileMatchPattern", write_kiro, read_kiro
)
CLINE = ScopingStyle("cline", "paths (a list)", write_cline, read_paths)
CONTINUE = ScopingStyle(
    "continue", "name, globs (a list), alwaysApply", write_continue, read_continue
)
AUGMENT = ScopingStyle(
    "augment", "type (always_apply, agent_requested, manual)", write_augment, read_augment
)
NONE = ScopingStyle(
    "none", "none: scoped documents are headed by their globs", write_none, read_none
)


# CodeBuddy Code (`.codebuddy/rules/*.md`): `alwaysApply` defaults to true there, so a
# rule for files matching `paths` says `alwaysApply: false`; a rule without `paths`
# and with `alwaysApply: false` is dropped by CodeBuddy (no rule picked by its
# description), so such a document stays in `CODEBUDDY.md`.


def write_codebuddy(scope: RuleScope) -> Fields | None:
    if scope.always_apply:
        return [*_description(scope), ("alwaysApply", True)]
    if scope.globs:
        return [*_description(scope), ("paths", scope.globs), ("alwaysApply", False)]
    return None


def read_codebuddy(metadata: dict[str, object]) -> Reading:
    """`paths` (a list, or comma-separated) and `alwaysApply` (true by default, and
    then the rule applies everywhere whatever its `paths`); `enabled: false` is noted."""
    reader = _Reader(metadata)
    reader.description()
    globs = reader.globs("paths")
    _always_apply(reader)
    if reader.ours.get("alwaysApply") is True:
        pass
    elif globs and set(globs) <= _EVERY_FILE:
        reader.ours["alwaysApply"] = True
    elif globs:
        reader.ours["globs"] = globs
        reader.ours.pop("alwaysApply", None)
    reader.known.add("enabled")
    if as_bool(metadata.get("enabled")) is False:
        reader.notes.append("`enabled: false`: CodeBuddy skips this rule; imported as enabled")
    return reader.done()


# JetBrains AI Assistant (`.aiassistant/rules/*.md`): a leading `---` block that is not
# YAML but `field: value` lines, split at the first colon, as the IDE's "Rule type"
# selector writes it: `apply:` (always, manually, by model decision, by file
# patterns, off), `instructions:` (the condition of a rule the model picks) and
# `patterns:` (comma-separated globs). Other fields are ignored by the IDE; a
# `description:` line keeps ours.
AIASSISTANT_APPLY = ("always", "manually", "by model decision", "by file patterns", "off")


def _one_line(value: str) -> str | None:
    # A line break would start another field, and `---` would end the block.
    flat = " ".join(value.split())
    return flat if flat and "---" not in flat else None


def _aiassistant_description(scope: RuleScope) -> Fields:
    line = _one_line(scope.description or "")
    return [("description", Raw(line))] if line else []


def write_aiassistant(scope: RuleScope) -> Fields | None:
    if scope.always_apply:
        return [("apply", Raw("always")), *_aiassistant_description(scope)]
    # The IDE splits `patterns` on every comma, so a pattern with one is left out.
    patterns = [glob for glob in scope.globs if _one_line(glob) == glob and "," not in glob]
    if patterns:
        return [
            ("apply", Raw("by file patterns")),
            ("patterns", Raw(", ".join(patterns))),
            *_aiassistant_description(scope),
        ]
    instructions = _one_line(scope.description or "")
    if instructions:
        return [("apply", Raw("by model decision")), ("instructions", Raw(instructions))]
    return [("apply", Raw("manually"))]


def read_aiassistant(metadata: dict[str, object]) -> Reading:
    reader = _Reader(metadata)
    reader.description()
    apply = reader.choice("apply", "always", AIASSISTANT_APPLY)
    patterns = reader.globs("patterns")
    reader.known.add("instructions")
    if apply == "by file patterns":
        reader.set_globs(patterns)
    elif apply == "by model decision":
        if "description" not in reader.ours:
            reader.description("instructions")
        reader.ours["alwaysApply"] = False
    elif apply in ("manually", "off"):
        reader.ours["alwaysApply"] = False
        if apply == "off":
            reader.notes.append("`apply: off`: AI Assistant skips this rule; imported as manual")
    return reader.done()


CODEBUDDY = ScopingStyle(
    "codebuddy", "description, paths (a list), alwaysApply", write_codebuddy, read_codebuddy
)
AIASSISTANT = ScopingStyle(
    "aiassistant",
    "apply (always, by file patterns, by model decision, manually), patterns, instructions",
    write_aiassistant,
    read_aiassistant,
    line_fields=True,
)
