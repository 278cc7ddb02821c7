"""What a tool loads for a file: the explainer behind `GET .../explain`, `agentdocs
explain` and the Explain page.

Given a tool of the registry (`agentdocs.core.targets.LoadingTool`), the files of its
format (the current export) and a file path in the repository, it answers, from the
registry's declarations only (so that changing an entry changes the answer):

- the files the tool loads for that path, in its load order (`LoadingTool.load_order`:
  its main file, the per-folder files from the root down to the file's folder, or only
  the closest one for a tool where the closest wins, then its rule files whose scope
  takes the path), each with its size and where the tool's limits cut it
  (`repository_runs.cut_points`, the warnings of `tool_limits`);
- which scoped documents each file holds and why they apply (the glob that matched,
  or that the file is read whatever the path);
- the rule files it does not load, and why (no glob matches; picked by description);
- what is shadowed: an agent notes document of another level the cascade passes over
  (a project's `agent.md` over `_vance`'s), a per-folder file above the closest one.

Plain Python: the API, the web page and the CLI's output read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from agentdocs.core.errors import InvalidInput
from agentdocs.core.export import ExportFile
from agentdocs.core.export_reading import read_exported
from agentdocs.core.repository_runs import cut_points, loading_tool, rule_scope
from agentdocs.core.scope import DocumentScope, path_problem
from agentdocs.core.targets import TOOLS_BY_SLUG, LoadingTool
from agentdocs.core.tool_limits import limit_warnings

CONTEXT_PREFIX = ".AGENTS/"


class AppliedDict(TypedDict):
    document: str
    globs: list[str]
    matched: str | None
    why: str


class LoadedDict(TypedDict):
    path: str
    bytes: int
    characters: int
    why: str
    cut_at: int | None
    documents: list[AppliedDict]


class SkippedDict(TypedDict):
    path: str
    why: str


class ShadowedDict(TypedDict):
    path: str
    by: str
    why: str


class ExplanationDict(TypedDict):
    tool: str
    format: str
    path: str
    folder: str
    files: list[LoadedDict]
    not_loaded: list[SkippedDict]
    shadowed: list[ShadowedDict]
    warnings: list[str]


@dataclass(frozen=True)
class Shadowed:
    """Something the tool does not read for the path because another comes first."""

    path: str
    by: str
    why: str

    def as_dict(self) -> ShadowedDict:
        return {"path": self.path, "by": self.by, "why": self.why}


@dataclass(frozen=True)
class Explanation:
    tool: str
    format: str
    path: str
    folder: str
    files: tuple[LoadedDict, ...]
    not_loaded: tuple[SkippedDict, ...]
    shadowed: tuple[Shadowed, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    def as_dict(self) -> ExplanationDict:
        return {
            "tool": self.tool,
            "format": self.format,
            "path": self.path,
            "folder": self.folder,
            "files": list(self.files),
            "not_loaded": list(self.not_loaded),
            "shadowed": [item.as_dict() for item in self.shadowed],
            "warnings": list(self.warnings),
        }


def validate_tool(name: str | None) -> LoadingTool:
    """The tool ``name`` names (its registry id, `codex`, or its format, `agents-md`),
    else InvalidInput naming `tool`."""
    tool = loading_tool(name or "")
    if tool is None:
        raise InvalidInput(
            f"`tool` must be one of {', '.join(TOOLS_BY_SLUG)} (or an export format).",
            field="tool",
        )
    return tool


def validate_path(path: str | None) -> str:
    """A file (or, ending in `/`, a folder) relative to the repository's root, else
    InvalidInput naming `path`."""
    problem = path_problem(path)
    if problem is None and path is not None and "\\" in path:
        problem = "use `/` between folders"
    if problem is not None:
        raise InvalidInput(f"`path`: {problem}.", field="path")
    assert path is not None
    return path.removeprefix("./")


def folder_of(path: str) -> str:
    """The folder a tool works in for ``path``: the file's folder (`src/api` for
    `src/api/handlers.py`), or the path itself when it ends with `/`; `""`: the root."""
    if path.endswith("/"):
        return path.strip("/")
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _matched(globs: Sequence[str], path: str) -> str | None:
    return next((glob for glob in globs if DocumentScope(globs=(glob,)).matches([path])), None)


def _documents(
    file: ExportFile, path: str, scopes: Mapping[str, DocumentScope], *, filtered: bool
) -> list[AppliedDict]:
    """The `.AGENTS/` documents ``file`` holds (by its provenance line) and why each
    applies to ``path``; ``filtered``: the tool loaded the file because its globs match."""
    exported = read_exported(file.content)
    if exported is None:
        return []
    applied: list[AppliedDict] = []
    for source in exported.provenance.sources:
        if not source.path.startswith(CONTEXT_PREFIX):
            continue
        scope = scopes.get(source.path, DocumentScope())
        globs = list(scope.globs)
        matched = _matched(globs, path) if globs else None
        if not scope.scoped:
            why = "always applies"
        elif matched is not None:
            why = f"its glob {matched} matches {path}"
        elif filtered:
            why = "the tool loads this file by its own frontmatter"
        elif globs:
            why = f"no glob matches {path}, but the tool reads this file whole"
        else:
            why = "picked by its description; the tool reads this file whole"
        applied.append({"document": source.path, "globs": globs, "matched": matched, "why": why})
    return applied


def explain(
    tool: LoadingTool,
    files: Sequence[ExportFile],
    path: str,
    *,
    scopes: Mapping[str, DocumentScope] | None = None,
    shadowed_notes: Sequence[Shadowed] = (),
) -> Explanation:
    """What ``tool`` loads for ``path`` from ``files`` (its format's export, or a
    repository's), see the module's docstring. ``scopes``: each `.AGENTS/` document's
    scope by path; ``shadowed_notes``: what the agent notes' cascade passed over."""
    scopes = scopes or {}
    by_path = {file.path: file for file in files}
    folder = folder_of(path)
    order = tool.load_order(sorted(by_path), folder)
    loaded: list[ExportFile] = []
    reasons: dict[str, str] = {}
    skipped: list[SkippedDict] = []
    entry = tool.target
    nested = tool.nested
    for candidate in order:
        file = by_path[candidate]
        scope = rule_scope(tool, candidate, file.content)
        if scope is None or candidate == entry.main:
            nested_in = tool.nested_folder(candidate)
            if nested_in is None:
                reasons[candidate] = "the tool's main file, read for every path"
            elif nested is not None and nested.reach == "closest":
                reasons[candidate] = f"the closest {candidate.rsplit('/', 1)[-1]} to {path}"
            else:
                when = nested.when if nested is not None else ""
                reasons[candidate] = f"the file of {nested_in}/, {when}"
            loaded.append(file)
            continue
        globs = list(scope.get("globs") or [])
        always = scope.get("alwaysApply", not globs and not scope.get("description"))
        if globs:
            matched = _matched(globs, path)
            if matched is None:
                skipped.append({"path": candidate, "why": f"no glob of {globs} matches {path}"})
                continue
            reasons[candidate] = f"a rule: its glob {matched} matches {path}"
        elif always:
            reasons[candidate] = "a rule that always applies"
        else:
            skipped.append(
                {
                    "path": candidate,
                    "why": "picked by its description (or by hand), not by the path: "
                    "loaded only when the agent (or you) picks it",
                }
            )
            continue
        loaded.append(file)
    cuts = cut_points(tool, [(file.path, file.content) for file in loaded])
    answer: list[LoadedDict] = [
        {
            "path": file.path,
            "bytes": file.size,
            "characters": len(file.content),
            "why": reasons[file.path],
            "cut_at": cuts[file.path],
            "documents": _documents(
                file, path, scopes, filtered=rule_scope(tool, file.path, file.content) is not None
            ),
        }
        for file in loaded
    ]
    shadowed = list(shadowed_notes)
    if nested is not None and nested.reach == "closest":
        above = tool.on_path(sorted(by_path), folder)
        closest = above[-1] if above else None
        if closest is not None:
            for other in [entry.main, *above[:-1]]:
                if other in by_path:
                    shadowed.append(Shadowed(other, closest, "the closest file to the path wins"))
    if nested is not None:
        shadowed.extend(_unread_names(tool, by_path, folder))
    # The limits are the format's tool's (Codex's for AGENTS.md), not every reader's.
    own = tool.nested_override is None
    warnings = tuple(w.message for w in limit_warnings(entry, loaded)) if own else ()
    return Explanation(
        tool=tool.slug,
        format=tool.format,
        path=path,
        folder=f"{folder}/" if folder else "",
        files=tuple(answer),
        not_loaded=tuple(skipped),
        shadowed=tuple(shadowed),
        warnings=warnings,
    )


def _unread_names(
    tool: LoadingTool, by_path: Mapping[str, ExportFile], folder: str
) -> list[Shadowed]:
    """In each folder on the path, the per-folder files a name listed before them
    shadows (Codex reads `AGENTS.override.md` instead of `AGENTS.md`)."""
    nested = tool.nested
    assert nested is not None
    found: list[Shadowed] = []
    parts = [part for part in folder.split("/") if part]
    for depth in range(1, len(parts) + 1):
        here = "/".join(parts[:depth])
        present = [f"{here}/{name}" for name in nested.files if f"{here}/{name}" in by_path]
        for other in present[1:]:
            first = present[0].rsplit("/", 1)[-1]
            why = f"the tool reads one file per folder: {first} comes first"
            found.append(Shadowed(other, present[0], why))
    return found
