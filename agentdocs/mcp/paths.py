"""What an MCP tool or resource may name: a document path of the session's project, and
nothing else.

A path is refused (`invalid_path`, before any request is made) when it could name
something other than a document of the project: a `.` or `..` segment (a client that
normalises the URL would climb out of the project, to another project's document or to
any endpoint of the API), a percent-encoded slash or backslash (a separator that appears
only once the path is decoded), an absolute path or URL, a backslash or a control
character. A resource URI is read against the session's own tenant and project: the
resource a read answers is always the one its URI names.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

ENCODED_SEPARATOR = re.compile(r"%(2f|5c)", re.IGNORECASE)
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
MAX_PATH_LENGTH = 1024


class InvalidPath(ValueError):
    """A tool's or resource's path that is not a document path of the project."""

    code = "invalid_path"

    def __init__(self, detail: str, *, field: str = "path") -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


def document_path(path: str, *, field: str = "path") -> str:
    """``path`` when it names a document inside the project, else InvalidPath."""
    if not path:
        raise InvalidPath("The path is empty.", field=field)
    if len(path) > MAX_PATH_LENGTH:
        raise InvalidPath(
            f"The path is {len(path)} characters long; at most {MAX_PATH_LENGTH} are allowed.",
            field=field,
        )
    if SCHEME.match(path) or path.startswith("//"):
        raise InvalidPath(
            "The path must be a document path of this project, not a URL.", field=field
        )
    if path.startswith("/"):
        raise InvalidPath("The path must be relative: remove the leading '/'.", field=field)
    if "\\" in path:
        raise InvalidPath("The path contains a backslash; use '/' between folders.", field=field)
    if ENCODED_SEPARATOR.search(path):
        raise InvalidPath(
            "The path contains a percent-encoded '/' or '\\'; write the path as it is.",
            field=field,
        )
    if any(ord(character) < 32 or ord(character) == 127 for character in path):
        raise InvalidPath("The path contains a control character.", field=field)
    for segment in path.split("/"):
        if segment in (".", ".."):
            raise InvalidPath(f"The path may not contain a '{segment}' segment.", field=field)
    return path


def resource_document_path(uri: str, documents_prefix: str) -> str | None:
    """The document path a resource URI of this project names (``documents_prefix`` is
    `agentdocs://T/P/documents/` of the session's own tenant and project); None when the
    URI is not one of the project's documents; InvalidPath when its path could leave it."""
    if not uri.startswith(documents_prefix) or uri == documents_prefix:
        return None
    raw = uri.removeprefix(documents_prefix)
    if ENCODED_SEPARATOR.search(raw):
        document_path(raw, field="uri")  # raises: the separator is named
    return document_path(unquote(raw), field="uri")
