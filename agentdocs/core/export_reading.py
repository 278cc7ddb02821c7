"""Reading an exported file back: its provenance line and its sections.

`agentdocs.core.export` writes each file as its frontmatter (if any), one provenance
line naming the tenant, the project and each source document as
``project/path@vN sha12`` (`ExportSource.label`), then the sections: the Policy
(`POLICY_HEADING`), the agent notes (`agent_notes_heading`), the project context
(`CONTEXT_HEADING`, then `### .AGENTS/<name>` per document); a per-document rule
file (a Cursor rule, a Copilot instructions file) is the one document's text.

This module reads that back with the same constants, so a round trip can tell which
lines came from which document. Document text in an export cannot start a line that
reads as one of those headings (`agentdocs.core.block_structure.neutralize`), so each
such line is structure. Plain Python over strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from agentdocs.core.agent_files import split_frontmatter
from agentdocs.core.export import PROVENANCE_START, ExportSource
from agentdocs.core.layer_headings import CONTEXT_HEADING, POLICY_HEADING

PROVENANCE_END = "-->"
CONTEXT_SECTION_PREFIX = "### "
# The heading of a scoped document's section goes on after its path with this.
SCOPE_SUFFIX = " (applies to files matching:"
NOTES_HEADING_PREFIX = "## Agent Notes ("

_PROVENANCE = re.compile(
    r"tenant: (?P<tenant>[^;]*); project: (?P<project>[^;]*); sources: (?P<sources>.*?)"
    r"(?:; placed: (?P<placed>.*?))?\s*$",
    re.DOTALL,
)
# One `ExportSource.label`: `web/agent.md@v3 0123456789ab`, `bundled/agent.md@default ...`.
_LABEL = re.compile(
    r"(?P<project>[^/\s,]+)/(?P<path>.+?)@(?:v(?P<version>\d+)|default) (?P<sha>[0-9a-f]{12})"
    r"(?:, |$)"
)
BUNDLED = "bundled"

SectionKind = Literal["outside", "policy", "notes", "context"]


@dataclass(frozen=True)
class Provenance:
    """What an exported file's provenance line says. Each source's ``sha256`` is the
    first 12 hex digits the line holds."""

    tenant: str
    project: str
    sources: tuple[ExportSource, ...]
    # Where the file's tool got each scoped document (`.AGENTS/api.md in
    # src/api/AGENTS.md (src/api/**)`), for a tool that reads a file per folder.
    placed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """A part of an exported file: ``heading`` is its heading line (empty for text
    outside every section), ``path`` the document a context heading names (None when it
    names none of the sources), ``text`` what follows the heading, without the blank
    lines around it."""

    kind: SectionKind
    heading: str
    text: str
    path: str | None = None


@dataclass(frozen=True)
class ExportedFile:
    """An exported file read back: its provenance, the frontmatter as written, and the
    text after the provenance line."""

    provenance: Provenance
    frontmatter: str
    body: str


def _sources(named: str) -> tuple[ExportSource, ...] | None:
    if named == "none":
        return ()
    sources: list[ExportSource] = []
    at = 0
    while at < len(named):
        match = _LABEL.match(named, at)
        if match is None:
            return None
        project = match["project"]
        version = match["version"]
        sources.append(
            ExportSource(
                project=None if project == BUNDLED and version is None else project,
                path=match["path"],
                version=int(version) if version is not None else None,
                sha256=match["sha"],
            )
        )
        at = match.end()
    return tuple(sources)


def read_exported(content: str) -> ExportedFile | None:
    """``content`` read as a file agentdocs exported, or None when it is not one: no
    provenance line right after the frontmatter (blank lines allowed before it), or one
    that does not name a tenant, a project and the sources."""
    _raw, head, rest = split_frontmatter(content)
    leading = len(rest) - len(rest.lstrip("\r\n"))
    if not rest.startswith(PROVENANCE_START, leading):
        return None
    end = rest.find(PROVENANCE_END, leading + len(PROVENANCE_START))
    if end == -1:
        return None
    inside = rest[leading + len(PROVENANCE_START) : end]
    match = _PROVENANCE.search(inside)
    if match is None:
        return None
    sources = _sources(match["sources"])
    if sources is None:
        return None
    placed = tuple(p.strip() for p in (match["placed"] or "").split("; ") if p.strip())
    provenance = Provenance(
        tenant=match["tenant"].strip(),
        project=match["project"].strip(),
        sources=sources,
        placed=placed,
    )
    return ExportedFile(provenance=provenance, frontmatter=head, body=rest[end + 3 :])


def _context_path(heading: str, paths: tuple[str, ...]) -> str | None:
    """The source a `### .AGENTS/...` heading names: its whole text, or the text before
    the scope it adds; the longest such path wins."""
    named = heading[len(CONTEXT_SECTION_PREFIX) :]
    found = [path for path in paths if named == path or named.startswith(f"{path}{SCOPE_SUFFIX}")]
    return max(found, key=len) if found else None


def _heading_kind(line: str, *, in_context: bool) -> SectionKind | Literal["block"] | None:
    if line == POLICY_HEADING:
        return "policy"
    if line.startswith(NOTES_HEADING_PREFIX) and line.endswith(")"):
        return "notes"
    if line == CONTEXT_HEADING:
        return "block"
    if in_context and line.startswith(f"{CONTEXT_SECTION_PREFIX}.AGENTS/"):
        return "context"
    return None


def is_sectioned(body: str) -> bool:
    """Whether ``body`` has the sections of a main file (AGENTS.md and the like),
    rather than being the one document of a per-document rule file."""
    return any(
        _heading_kind(line.rstrip("\r"), in_context=False) is not None for line in body.split("\n")
    )


def read_sections(body: str, *, context_paths: tuple[str, ...]) -> list[Section]:
    """The sections of a main file's ``body`` in order; text before the first heading,
    or between the project context's heading and its first document, is ``outside``
    (only when there is some)."""
    sections: list[Section] = []
    kind: SectionKind = "outside"
    heading = ""
    path: str | None = None
    lines: list[str] = []
    in_context = False

    def close() -> None:
        text = "\n".join(lines).strip()
        if kind != "outside" or text:
            sections.append(Section(kind=kind, heading=heading, text=text, path=path))

    for line in body.split("\n"):
        found = _heading_kind(line.rstrip("\r"), in_context=in_context)
        if found is None:
            lines.append(line)
            continue
        close()
        lines, heading, path = [], line.rstrip("\r"), None
        if found == "block":
            in_context, kind = True, "outside"
            continue
        in_context = in_context and found == "context"
        kind = found
        if found == "context":
            path = _context_path(heading, context_paths)
    close()
    return sections


@dataclass(frozen=True)
class Adopted:
    """A generated file taken as a hand-written one (an import with ``adopt``):
    ``content`` is what to import in its place, None when nothing of it is a document;
    ``note`` says what was kept of it."""

    content: str | None
    note: str


def adopt(exported: ExportedFile, *, per_folder: bool = False) -> Adopted:
    """Another project's (or this one's) export, to start a project from: its
    provenance line goes; of a main file (AGENTS.md and the like) only the agent notes
    are kept, since the Policy is the settings of the project it came from and the
    project context's documents arrive as their own rule files. Of a folder's file
    (``per_folder``: `src/api/AGENTS.md`), its documents' text, for the document of
    that folder."""
    origin = f"adopted from {exported.provenance.tenant}/{exported.provenance.project}"
    if per_folder and is_sectioned(exported.body):
        texts = [
            section.text
            for section in read_sections(exported.body, context_paths=())
            if section.kind == "context" and section.text
        ]
        if not texts:
            return Adopted(None, f"{origin}: it holds no rules")
        return Adopted(
            "\n\n".join(texts) + "\n",
            f"{origin}: the rules of its folder, without the provenance line",
        )
    if not is_sectioned(exported.body):
        return Adopted(
            exported.frontmatter + exported.body.lstrip("\r\n"),
            f"{origin}; agentdocs provenance comment stripped",
        )
    notes = [
        section.text
        for section in read_sections(exported.body, context_paths=())
        if section.kind == "notes"
    ]
    if not notes or not notes[0]:
        return Adopted(None, f"{origin}: it holds no agent notes")
    return Adopted(
        notes[0] + "\n",
        f"{origin}: its agent notes, without the provenance line, the Policy and the "
        "project context",
    )
