"""The `.AGENTS/` context loader: project context files under a byte budget.

The reference behaviour is the seed's TypeScript `loadContext`, with three
fixes: the budget counts UTF-8 bytes (not characters), truncation never splits
a character, and every file that was not loaded is listed as dropped instead of
silently rolling off.

A document may start with YAML frontmatter that scopes it to some paths of the
repository (`agentdocs.core.scope`); the frontmatter is never rendered, and a
scoped document that no path of the task matches is listed as skipped by scope.

Works over plain data (`load_context`, `load_context_from_mapping`) and over a
local folder (`load_context_dir`); the server and the command-line client use
the same rules.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

from agentdocs.core.block_structure import STRUCTURE_VERSION, neutralize_lines
from agentdocs.core.scope import DocumentScope, ParsedDocument, parse_document

CONTEXT_FOLDER = ".AGENTS"
DEFAULT_BUDGET_BYTES = 32 * 1024
# Below this many bytes of budget left, a truncated head is not worth its marker.
MIN_TRUNCATED_BYTES = 256
PRIORITY = ("overview.md", "conventions.md", "glossary.md")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ContextDocument:
    """One candidate file: its path as cited in `<context path="...">` and its text."""

    path: str
    body: str
    version: int | None = None
    sha256: str = ""
    # Read by a label (`agentdocs.core.labels`) the document does not have: its latest.
    label_fallback: bool = False

    def __post_init__(self) -> None:
        if not self.sha256:
            object.__setattr__(self, "sha256", sha256_text(self.body))

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def size(self) -> int:
        """The stored document's bytes, frontmatter included."""
        return len(self.body.encode("utf-8"))

    @property
    def parsed(self) -> ParsedDocument:
        return parse_document(self.body)

    @property
    def scope(self) -> DocumentScope:
        return self.parsed.scope

    @property
    def text(self) -> str:
        """What is rendered: the body without its frontmatter."""
        return self.parsed.body

    @property
    def text_size(self) -> int:
        return len(self.text.encode("utf-8"))


class ContextSourceAccount(TypedDict):
    """A loaded `.AGENTS/` file in a render's account."""

    path: str
    version: int | None
    sha256: str
    bytes: int
    total_bytes: int
    truncated: bool
    # Lines of the sent text that would have read as the block's structure
    # (`agentdocs.core.block_structure`); only when there were any.
    neutralized: NotRequired[int]


class DroppedAccount(TypedDict):
    """A file left out over the budget."""

    path: str
    version: int | None
    sha256: str
    bytes: int


class SkippedAccount(TypedDict):
    """A scoped file left out: no path of the task matches its globs."""

    path: str
    globs: list[str]


class FrontmatterProblemAccount(TypedDict):
    """A file whose frontmatter was not understood: rendered whole, always applied."""

    path: str
    detail: str


class ContextAccount(TypedDict):
    budget_bytes: int
    used_bytes: int
    sources: list[ContextSourceAccount]
    dropped: list[DroppedAccount]
    skipped_by_scope: list[SkippedAccount]
    frontmatter_problems: list[FrontmatterProblemAccount]


@dataclass(frozen=True)
class ContextSource:
    """A file that was loaded, whole or as a truncated head.

    ``content`` is what is sent: the text with its structure lines neutralized
    (``neutralized`` of them, in the part sent), cut when truncated; ``total_bytes``
    is the whole neutralized text's size (None: the document's own text size)."""

    document: ContextDocument
    content: str
    bytes: int
    truncated: bool
    neutralized: int = 0
    total_bytes: int | None = None

    def as_dict(self) -> ContextSourceAccount:
        account: ContextSourceAccount = {
            "path": self.document.path,
            "version": self.document.version,
            "sha256": self.document.sha256,
            "bytes": self.bytes,
            "total_bytes": self.document.text_size
            if self.total_bytes is None
            else self.total_bytes,
            "truncated": self.truncated,
        }
        if self.neutralized:
            account["neutralized"] = self.neutralized
        return account


@dataclass(frozen=True)
class LoadedContext:
    sources: tuple[ContextSource, ...]
    dropped: tuple[ContextDocument, ...]
    rendered: str
    used_bytes: int
    budget_bytes: int
    skipped_by_scope: tuple[ContextDocument, ...] = ()
    frontmatter_problems: tuple[ContextDocument, ...] = ()

    @property
    def truncated(self) -> bool:
        return any(source.truncated for source in self.sources)

    @property
    def neutralized(self) -> int:
        """Structure lines neutralized in the sent sources, all together."""
        return sum(source.neutralized for source in self.sources)

    def as_dict(self) -> ContextAccount:
        """The account (the same object on every call: a render of a kept context
        answers with it, so it must not be changed)."""
        return self._account

    @functools.cached_property
    def _account(self) -> ContextAccount:
        return {
            "budget_bytes": self.budget_bytes,
            "used_bytes": self.used_bytes,
            "sources": [source.as_dict() for source in self.sources],
            "dropped": [
                {
                    "path": document.path,
                    "version": document.version,
                    "sha256": document.sha256,
                    "bytes": document.text_size,
                }
                for document in self.dropped
            ],
            "skipped_by_scope": [
                {"path": document.path, "globs": list(document.scope.globs)}
                for document in self.skipped_by_scope
            ],
            "frontmatter_problems": [
                {"path": document.path, "detail": document.parsed.problem or ""}
                for document in self.frontmatter_problems
            ],
        }


def empty_context(budget_bytes: int) -> LoadedContext:
    return LoadedContext(
        sources=(), dropped=(), rendered="", used_bytes=0, budget_bytes=budget_bytes
    )


def is_context_name(name: str) -> bool:
    """A direct child's file name that the loader takes: `*.md`, no folder.

    A file named just `.md` is taken too, as the seed does: it is a document
    like any other, and nothing in the folder is passed over silently.
    """
    return name.endswith(".md") and "/" not in name


def order_documents(documents: Iterable[ContextDocument]) -> list[ContextDocument]:
    """The three priority files first in their fixed order, the rest alphabetically."""
    by_name = {document.name: document for document in documents}
    head = [by_name[name] for name in PRIORITY if name in by_name]
    tail = [by_name[name] for name in sorted(by_name) if name not in PRIORITY]
    return head + tail


def utf8_head(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` that is at most ``max_bytes`` UTF-8 bytes."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    # Continuation bytes look like 0b10xxxxxx; back off to a character boundary.
    end = max_bytes
    while end > 0 and (encoded[end] & 0xC0) == 0x80:
        end -= 1
    return encoded[:end].decode("utf-8")


def _escape_attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def render_sources(sources: Iterable[ContextSource]) -> str:
    return "\n\n".join(
        f'<context path="{_escape_attribute(source.document.path)}">\n'
        f"{source.content.rstrip()}\n</context>"
        for source in sources
    )


def split_by_scope(
    documents: Iterable[ContextDocument], paths: Sequence[str] = ()
) -> tuple[list[ContextDocument], list[ContextDocument]]:
    """The documents that apply to a task touching ``paths``, and the scoped ones that
    do not (no path matches their globs). Without paths every scoped document is out."""
    applying: list[ContextDocument] = []
    skipped: list[ContextDocument] = []
    for document in documents:
        (applying if document.scope.applies(paths) else skipped).append(document)
    return applying, skipped


def load_context(
    documents: Iterable[ContextDocument],
    *,
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
    paths: Sequence[str] = (),
    structure: int = STRUCTURE_VERSION,
) -> LoadedContext:
    """Load ``documents`` in priority order until the byte budget is spent.

    Scoped documents that no path in ``paths`` matches are left out first and
    listed in ``skipped_by_scope``; each document's frontmatter is left out of
    its text.

    A file that fits is taken whole. The first that does not fit is truncated
    with a visible `[truncated: N more bytes]` marker when at least 256 bytes
    of budget remain, and loading stops there; every later file (and that one,
    when too little remained to truncate it) is dropped. The budget counts the
    files' own bytes (without frontmatter), not the marker or the `<context>` wrapping.

    Each file's lines that would read as the block's own structure (a `<context>` tag,
    a layer heading) are neutralized first by the rules of version ``structure``
    (`agentdocs.core.block_structure`; an older one renders a block again as it was
    under those rules, 0 as before any); the budget counts the neutralized text, which
    is what is sent. A dropped file is listed with its own size.
    """
    if budget_bytes < 0:
        raise ValueError("budget_bytes must not be negative")
    applying, skipped = split_by_scope(documents, paths)
    ordered = order_documents(applying)
    sources: list[ContextSource] = []
    used = 0
    stopped_at = len(ordered)
    for index, document in enumerate(ordered):
        text, changed = neutralize_lines(document.text, version=structure)
        size = len(text.encode("utf-8")) if changed else document.text_size
        remaining = budget_bytes - used
        total = size if changed else None
        if size <= remaining:
            sources.append(
                ContextSource(
                    document,
                    text,
                    size,
                    truncated=False,
                    neutralized=len(changed),
                    total_bytes=total,
                )
            )
            used += size
            continue
        stopped_at = index
        if remaining >= MIN_TRUNCATED_BYTES:
            head = utf8_head(text, remaining)
            head_bytes = len(head.encode("utf-8"))
            marker = f"\n\n[truncated: {size - head_bytes} more bytes]"
            sent = sum(1 for offset in changed if offset < len(head))
            sources.append(
                ContextSource(
                    document,
                    head + marker,
                    head_bytes,
                    truncated=True,
                    neutralized=sent,
                    total_bytes=total,
                )
            )
            used += head_bytes
            stopped_at = index + 1
        break
    return LoadedContext(
        sources=tuple(sources),
        dropped=tuple(ordered[stopped_at:]),
        rendered=render_sources(sources),
        used_bytes=used,
        budget_bytes=budget_bytes,
        skipped_by_scope=tuple(order_documents(skipped)),
        frontmatter_problems=tuple(
            document for document in order_documents(applying) if document.parsed.problem
        ),
    )


def select_context_documents(
    documents: Iterable[ContextDocument], *, folder: str = CONTEXT_FOLDER
) -> list[ContextDocument]:
    """Keep the direct children of ``folder`` whose names end in `.md`."""
    prefix = folder.rstrip("/") + "/"
    return [
        document
        for document in documents
        if document.path.startswith(prefix) and is_context_name(document.path[len(prefix) :])
    ]


def load_context_from_mapping(
    files: Mapping[str, str],
    *,
    folder: str = CONTEXT_FOLDER,
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
) -> LoadedContext:
    """The loader over a dict of path -> text (paths such as `.AGENTS/overview.md`)."""
    documents = [ContextDocument(path=path, body=body) for path, body in files.items()]
    return load_context(
        select_context_documents(documents, folder=folder), budget_bytes=budget_bytes
    )


def load_context_dir(
    directory: str | os.PathLike[str], *, budget_bytes: int = DEFAULT_BUDGET_BYTES
) -> LoadedContext:
    """The loader over a local folder; a missing folder is an empty context, not an error.

    Paths are cited as the folder was named joined with the file name, as the
    seed does (`.AGENTS/overview.md` for the folder `.AGENTS`).
    """
    folder = Path(directory)
    if not folder.is_dir():
        return empty_context(budget_bytes)
    shown = os.fspath(directory).replace(os.sep, "/").rstrip("/") or "."
    documents = []
    for entry in sorted(folder.iterdir()):
        if not is_context_name(entry.name) or not entry.is_file():
            continue
        # Bytes, not read_text(): universal newlines would change what the budget counts.
        body = entry.read_bytes().decode("utf-8", errors="replace")
        documents.append(ContextDocument(path=f"{shown}/{entry.name}", body=body))
    return load_context(documents, budget_bytes=budget_bytes)
