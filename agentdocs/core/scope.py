"""Scoped context documents: the YAML frontmatter of a `.AGENTS/` document.

A document may start with frontmatter between two `---` lines::

    ---
    description: How the REST API is laid out
    globs: ["src/api/**", "*.sql"]
    alwaysApply: false
    ---

``globs`` are gitignore-style patterns (matched with pathspec's
`GitIgnoreSpec`, so `*.py` matches at any depth and `/docs/` only at the
root); a comma-separated string is taken as a list, as Cursor writes them.
``alwaysApply`` defaults to true when there are no globs and to false when
there are. The frontmatter is never part of the rendered text.

Frontmatter that cannot be understood (YAML that does not parse, a value of
the wrong type, a glob pathspec refuses) never fails a render: the document is
treated as having no frontmatter (always applied, its whole text rendered) and
the problem is reported, so that the author can see and fix it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import frontmatter
import yaml
from pathspec import GitIgnoreSpec

_YAML = frontmatter.YAMLHandler()

MAX_PATHS = 1000
MAX_PATH_LENGTH = 1024


@dataclass(frozen=True)
class DocumentScope:
    """Where a document applies, from its frontmatter (or the defaults without one)."""

    description: str | None = None
    globs: tuple[str, ...] = ()
    always_apply: bool = True

    @property
    def scoped(self) -> bool:
        """Included only when a path of the task matches its globs."""
        return not self.always_apply

    def matches(self, paths: Iterable[str]) -> bool:
        """Does any of ``paths`` match the globs? (Not whether the document applies:
        see `applies`.)"""
        if not self.globs:
            return False
        spec = _spec(self.globs)
        return any(spec.match_file(path) for path in paths)

    def applies(self, paths: Iterable[str]) -> bool:
        return self.always_apply or self.matches(paths)


@dataclass(frozen=True)
class ParsedDocument:
    """A document's text split into its scope and the body that is rendered.

    ``problem`` is set when frontmatter was present but not understood; the
    scope is then the default and ``body`` the whole text.
    """

    scope: DocumentScope
    body: str
    problem: str | None = None


@lru_cache(maxsize=512)
def _spec(globs: tuple[str, ...]) -> GitIgnoreSpec:
    return GitIgnoreSpec.from_lines(globs)


def _globs(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = [item.strip() for item in value]
    else:
        raise ValueError("`globs` must be a list of strings")
    globs = tuple(item for item in items if item)
    try:
        _spec(globs)
    except ValueError as error:
        raise ValueError(f"`globs` holds a pattern that is not gitignore-style: {error}") from None
    return globs


def _scope(metadata: Any) -> DocumentScope:
    if not isinstance(metadata, dict):
        raise ValueError("the frontmatter is not a mapping of fields")
    description = metadata.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError("`description` must be a string")
    globs = _globs(metadata.get("globs"))
    always_apply = metadata.get("alwaysApply", not globs)
    if not isinstance(always_apply, bool):
        raise ValueError("`alwaysApply` must be true or false")
    return DocumentScope(description=description, globs=globs, always_apply=always_apply)


@lru_cache(maxsize=1024)
def parse_document(text: str) -> ParsedDocument:
    """Split ``text`` into its scope and rendered body; never raises on bad frontmatter."""
    if not _YAML.detect(text):
        return ParsedDocument(DocumentScope(), text)
    try:
        head, body = _YAML.split(text)
    except ValueError:
        # One `---` line and no second: a horizontal rule, not frontmatter.
        return ParsedDocument(DocumentScope(), text)
    try:
        scope = _scope(_YAML.load(head))
    except yaml.YAMLError as error:
        problem = f"the frontmatter is not valid YAML ({str(error).splitlines()[0]})"
        return ParsedDocument(DocumentScope(), text, problem=problem)
    except ValueError as error:
        return ParsedDocument(DocumentScope(), text, problem=str(error))
    return ParsedDocument(scope, body.lstrip("\r\n"))


def path_problem(path: Any) -> str | None:
    """Why ``path`` is not a task path (a relative file path in the repository), or None."""
    if not isinstance(path, str) or not path.strip():
        return "each path must be a non-empty string"
    if len(path) > MAX_PATH_LENGTH:
        return f"each path must be at most {MAX_PATH_LENGTH} characters"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        return "a path must not contain control characters"
    if path.startswith("/") or path.startswith("\\") or (len(path) > 1 and path[1] == ":"):
        return f"{path!r} is not relative to the repository root"
    if ".." in path.replace("\\", "/").split("/"):
        return f"{path!r} must not climb out of the repository with '..'"
    return None


def tool_glob(pattern: str) -> str | None:
    """A gitignore-style pattern as the plain globs Copilot's `applyTo` and Cursor's
    `globs` take, or None for a negation (`!pattern`), which they cannot express.

    A pattern without a slash matches at any depth (`*.py` becomes `**/*.py`);
    a leading slash anchors it at the root and is dropped; a trailing slash names
    a folder and matches everything under it.
    """
    if pattern.startswith("!"):
        return None
    directory = pattern.endswith("/")
    core = pattern.rstrip("/")
    if core.startswith("/"):
        core = core[1:]
    elif "/" not in core and not core.startswith("**"):
        core = f"**/{core}"
    return f"{core}/**" if directory else core


def same_rules(first: str, second: str) -> bool:
    """Whether two texts of a document say the same: the same body and the same scope,
    globs compared as tools take them (`*.py` and `**/*.py` match the same files), however
    the frontmatter is written. Text whose frontmatter is not understood is compared as
    it is."""
    if first == second:
        return True
    a, b = parse_document(first), parse_document(second)
    if a.problem or b.problem:
        return False
    return (
        a.body.strip() == b.body.strip()
        and a.scope.description == b.scope.description
        and a.scope.always_apply == b.scope.always_apply
        and _tool_globs(a.scope) == _tool_globs(b.scope)
    )


def _tool_globs(scope: DocumentScope) -> list[str | None]:
    return [tool_glob(glob) for glob in scope.globs]
