"""The values a Memory Block render takes: the agent process's id, the client
document, and the files the task touches. The API's serializers, the pages' form, the
MCP tools, binding records, change requests and sessions check them here."""

from __future__ import annotations

import re

from agentdocs.core.errors import InvalidInput
from agentdocs.core.memory_block import ClientDocument
from agentdocs.core.scope import MAX_PATHS, path_problem
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.validation.documents import MAX_BODY_BYTES

MAX_PROCESS_LENGTH = 200
MAX_CLIENT_NAME_LENGTH = 255
# A client document goes into the prompt like a stored one, so the same limit applies.
MAX_CLIENT_DOCUMENT_BYTES = MAX_BODY_BYTES


_CONTROL_CHARACTER = re.compile("[\x00-\x1f\x7f]")


def has_control_characters(value: str) -> bool:
    return _CONTROL_CHARACTER.search(value) is not None


# Process ids found valid by this process: the check is a pure function of the text, and
# a render made it twice (the request's serializer, then `render_memory_block`), a secret
# scan and a hidden-character scan each time; an agent process sends the same id on
# every turn. Bounded: emptied when full.
_VALID_PROCESSES: dict[str, None] = {}
VALID_PROCESSES_MAX = 4096


def validate_process(process: str | None) -> str:
    """A process id, as renders and binding records name the agent process: one
    non-blank line of at most 200 characters, with no secret and no character a reader
    cannot see (members read it in binding records and the activity)."""
    if type(process) is str and process in _VALID_PROCESSES:
        return process
    process = _checked_process(process)
    if type(process) is str:
        if len(_VALID_PROCESSES) >= VALID_PROCESSES_MAX:
            _VALID_PROCESSES.clear()
        _VALID_PROCESSES[process] = None
    return process


def _checked_process(process: str | None) -> str:
    if process is None or (isinstance(process, str) and not process.strip()):
        raise InvalidInput(
            "`process` is required: the id of the agent process this block is for.",
            field="process",
        )
    if not isinstance(process, str):
        raise InvalidInput("`process` must be a string.", field="process")
    if len(process) > MAX_PROCESS_LENGTH or has_control_characters(process):
        raise InvalidInput(
            f"`process` must be one line of at most {MAX_PROCESS_LENGTH} characters.",
            field="process",
        )
    refuse_hidden_or_secret(process, field="process", what="The process")
    return process


def validate_client_document(*, name: str, body: str) -> ClientDocument:
    """A client document, as the pages and the API's serializer take it: one line of a
    name, a UTF-8 body of at most 256 KiB."""
    if not name.strip() or len(name) > MAX_CLIENT_NAME_LENGTH or has_control_characters(name):
        raise InvalidInput(
            f"The client document's name must be one line of 1 to {MAX_CLIENT_NAME_LENGTH} "
            "characters, such as CLAUDE.md.",
            field="client_document.name",
        )
    try:
        size = len(body.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(
            "The client document's body is not valid UTF-8 text.", field="client_document.body"
        ) from None
    if size > MAX_CLIENT_DOCUMENT_BYTES:
        raise InvalidInput(
            f"The client document is {size} bytes; at most {MAX_CLIENT_DOCUMENT_BYTES} "
            "bytes (256 KiB) are allowed.",
            field="client_document.body",
        )
    return ClientDocument(name=name, body=body)


def validate_paths(paths: object) -> tuple[str, ...]:
    """The files a task touches, as a render scopes `.AGENTS/` documents by them: a list
    of at most 1,000 relative paths. Returned sorted and without duplicates, since only
    whether one matches counts."""
    if paths is None:
        return ()
    if not isinstance(paths, list | tuple):
        raise InvalidInput("`paths` must be a list of relative file paths.", field="paths")
    if len(paths) > MAX_PATHS:
        raise InvalidInput(
            f"`paths` holds {len(paths)} entries; at most {MAX_PATHS} are allowed.",
            field="paths",
        )
    for path in paths:
        problem = path_problem(path)
        if problem is not None:
            raise InvalidInput(f"`paths`: {problem}.", field="paths")
    return tuple(sorted(set(paths)))
