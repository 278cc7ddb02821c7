"""Document paths: normalised relative POSIX paths, checked in one place."""

from __future__ import annotations

from agentdocs.core.errors import InvalidInput

MAX_PATH_LENGTH = 255
RESERVED_PREFIX = "_vance"


def validate_path(path: object, *, field: str = "path") -> str:
    """Return ``path`` if it is a normalised relative POSIX path, else raise."""
    if not isinstance(path, str):
        raise InvalidInput("The path must be a string.", field=field)
    if not path:
        raise InvalidInput("The path is empty.", field=field)
    if len(path) > MAX_PATH_LENGTH:
        raise InvalidInput(
            f"The path is {len(path)} characters long; at most {MAX_PATH_LENGTH} are allowed.",
            field=field,
        )
    if "\\" in path:
        raise InvalidInput("The path contains a backslash; use '/' between folders.", field=field)
    if path.startswith("/"):
        raise InvalidInput("The path must be relative: remove the leading '/'.", field=field)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        raise InvalidInput("The path contains a control character.", field=field)
    for segment in path.split("/"):
        if segment == "":
            raise InvalidInput(
                "The path has an empty segment ('//' or a trailing '/').", field=field
            )
        if segment in (".", ".."):
            raise InvalidInput(f"The path may not contain a '{segment}' segment.", field=field)
        if segment != segment.strip():
            raise InvalidInput("A path segment may not start or end with white space.", field=field)
    return path


def is_reserved_path(path: str) -> bool:
    return path == RESERVED_PREFIX or path.startswith(RESERVED_PREFIX + "/")
