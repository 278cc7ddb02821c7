"""Skills in the Agent Skills format, checked as plain data: a bundle of text files
(`SKILL.md` and files under `scripts/`, `references/`, `assets/`), its frontmatter
per the specification (agentskills.io/specification, as its `skills-ref` validator
reads it), and the text checks every stored text gets.

`check_skill` is the one check of a bundle: the service calls it before every write
(create, write, revert) and the command-line client can call it before a push. A
refusal names the file (`files/<path>`) and, for the frontmatter, the field after
`#` (`files/SKILL.md#description`); nothing is stored.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import yaml
from frontmatter import YAMLHandler

from agentdocs.core.agent_files import split_frontmatter
from agentdocs.core.errors import BinaryFile, InvalidInput, InvalidSkill, TooLarge
from agentdocs.core.hidden_characters import refuse_hidden
from agentdocs.core.paths import validate_new_path
from agentdocs.core.secret_scan import refuse_secret

SKILL_FILE = "SKILL.md"
BUNDLE_FOLDERS = ("scripts", "references", "assets")
MAX_FILES = 200

# The specification's limits (agentskills.io/specification).
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
# Its recommendation for the body the agent loads on activation: a warning, not a refusal.
RECOMMENDED_BODY_LINES = 500
RECOMMENDED_BODY_TOKENS = 5000
ALLOWED_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)

_NAME = re.compile(r"[a-z0-9-]+")
# Types no text editor saves: their bytes arrive here only decoded lossily.
BINARY_SUFFIXES = frozenset(
    {
        ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".bmp", ".tif", ".tiff",
        ".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".tar", ".jar", ".whl",
        ".exe", ".dll", ".so", ".dylib", ".o", ".a", ".class", ".pyc", ".wasm",
        ".woff", ".woff2", ".ttf", ".otf", ".mp3", ".mp4", ".wav", ".mov", ".sqlite",
    }
)  # fmt: skip
# C0 controls a text file does not hold (tab, line feed, form feed, carriage return do).
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")
_YAML = YAMLHandler()


@dataclass(frozen=True)
class CheckedSkill:
    """A bundle that may be stored: its files by path (sorted), the frontmatter's
    description, its size and digest, and the specification's recommendations it
    misses (warnings shown beside the editor, never refusals)."""

    files: dict[str, str]
    description: str
    size: int
    sha256: str
    warnings: list[str] = field(default_factory=list)


def file_field(path: str, key: str = "") -> str:
    """How a refusal names a file of the bundle, and a frontmatter field of it."""
    return f"files/{path}" + (f"#{key}" if key else "")


def validate_skill_name(name: object, *, field: str = "name") -> str:
    """A skill's name per the specification: 1 to 64 lowercase letters, digits and
    hyphens, neither starting nor ending with a hyphen, no two hyphens in a row."""
    if not isinstance(name, str):
        raise InvalidSkill("A skill's name is a string.", field=field)
    if not name:
        raise InvalidSkill("A skill's name may not be empty.", field=field)
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidSkill(
            f"A skill's name is at most {MAX_NAME_LENGTH} characters; {name[:20]!r}... has "
            f"{len(name)}.",
            field=field,
        )
    if not _NAME.fullmatch(name):
        raise InvalidSkill(
            f"A skill's name holds lowercase letters (a-z), digits and hyphens only: {name!r}.",
            field=field,
        )
    if name.startswith("-") or name.endswith("-"):
        raise InvalidSkill("A skill's name may not start or end with a hyphen.", field=field)
    if "--" in name:
        raise InvalidSkill("A skill's name may not hold two hyphens in a row.", field=field)
    return name


SKILLS_FOLDER = "skills"


def skill_path(name: str) -> str:
    """Where change requests and `review.required` name the skill ``name``:
    `skills/<name>`, as if its folder were a document's path (patterns such as
    `skills/**`, `skills/deploy` or, in `_vance`, `_vance/**` protect it)."""
    return f"{SKILLS_FOLDER}/{name}"


def bundle_sha256(files: Mapping[str, str]) -> str:
    """The bundle's digest: sha256 of its manifest, each path with its file's sha256
    (sorted), as JSON: equal bundles have equal digests whatever order they came in."""
    manifest = [
        [path, hashlib.sha256(files[path].encode("utf-8")).hexdigest()] for path in sorted(files)
    ]
    return hashlib.sha256(json.dumps(manifest, separators=(",", ":")).encode()).hexdigest()


def _check_path(path: object) -> str:
    if not isinstance(path, str):
        raise InvalidInput("A file's path is a string.", field="files")
    where = file_field(path)
    validate_new_path(path, field=where)
    if path == SKILL_FILE:
        return path
    folder = path.split("/", 1)[0]
    if folder not in BUNDLE_FOLDERS or "/" not in path:
        raise InvalidSkill(
            f"{path!r} is neither `{SKILL_FILE}` nor a file under "
            f"{', '.join(f'`{f}/`' for f in BUNDLE_FOLDERS)}.",
            field=where,
        )
    return path


def binary_reason(path: str, text: str) -> str | None:
    """Why the file ``path`` holding ``text`` is not a text file a skill may bundle
    (a binary type, a control character), or None when it is one."""
    suffix = path[path.rfind(".") :].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix in BINARY_SUFFIXES:
        return f"a `{suffix}` file is binary"
    control = _CONTROL.search(text)
    if control is not None:
        return f"it holds the control character U+{ord(control.group()):04X}"
    return None


def _file_size(path: str, text: object, *, max_file_bytes: int) -> int:
    """The size in bytes of a file that is text and under the cap."""
    where = file_field(path)
    if not isinstance(text, str):
        raise InvalidInput(f"The content of {path!r} is a string of UTF-8 text.", field=where)
    why = binary_reason(path, text)
    if why is not None:
        raise BinaryFile(
            f"{path!r} is not a text file ({why}); skills bundle text files only. "
            "Nothing was stored.",
            field=where,
        )
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(f"{path!r} is not valid UTF-8 text.", field=where) from None
    if size > max_file_bytes:
        raise TooLarge(
            f"{path!r} is {size} bytes; a skill's file is at most {max_file_bytes} bytes "
            "(`AGENTDOCS_SKILL_MAX_FILE_BYTES`). Nothing was stored.",
            field=where,
            limit=max_file_bytes,
        )
    return size


def _refuse_unreadable(path: str, text: str) -> None:
    """The checks every stored text gets: no secret, no character a reader cannot see."""
    where = file_field(path)
    refuse_secret(text, field=where, what=f"`{path}`")
    refuse_hidden(
        text,
        field=where,
        what=f"`{path}`",
        remedy="An agent would read what nobody reviewing the skill sees: remove them. "
        "Nothing was stored.",
    )


def _string(meta: Mapping[str, object], key: str, *, required: bool, limit: int | None) -> str:
    where = file_field(SKILL_FILE, key)
    value = meta.get(key)
    if value is None:
        if required:
            raise InvalidSkill(f"`{SKILL_FILE}`'s frontmatter needs `{key}`.", field=where)
        return ""
    if not isinstance(value, str):
        raise InvalidSkill(f"`{key}` is a string.", field=where)
    if not value.strip():
        raise InvalidSkill(f"`{key}` may not be empty.", field=where)
    if limit is not None and len(value) > limit:
        raise InvalidSkill(
            f"`{key}` is {len(value)} characters; at most {limit} are allowed.", field=where
        )
    return value


def _check_frontmatter(text: str, *, name: str) -> tuple[str, str]:
    """The description and the body of `SKILL.md`, its frontmatter checked."""
    raw, _head, body = split_frontmatter(text)
    if raw is None:
        raise InvalidSkill(
            f"`{SKILL_FILE}` starts with YAML frontmatter between `---` lines, holding "
            "`name` and `description`.",
            field=file_field(SKILL_FILE),
        )
    try:
        meta = _YAML.load(raw)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise InvalidSkill(
            f"`{SKILL_FILE}`'s frontmatter is not valid YAML{where}.",
            field=file_field(SKILL_FILE),
        ) from None
    if not isinstance(meta, dict):
        raise InvalidSkill(
            f"`{SKILL_FILE}`'s frontmatter is a mapping of fields.", field=file_field(SKILL_FILE)
        )
    unknown = sorted(str(key) for key in meta if key not in ALLOWED_FIELDS)
    if unknown:
        raise InvalidSkill(
            f"Unexpected field `{unknown[0]}` in `{SKILL_FILE}`'s frontmatter; the "
            f"specification allows {', '.join(f'`{k}`' for k in sorted(ALLOWED_FIELDS))}.",
            field=file_field(SKILL_FILE, unknown[0]),
        )
    given = _string(meta, "name", required=True, limit=None)
    validate_skill_name(given, field=file_field(SKILL_FILE, "name"))
    if given != name:
        raise InvalidSkill(
            f"The frontmatter's `name` is {given!r} but the skill is {name!r}: they must "
            "match (the skill's folder is its name).",
            field=file_field(SKILL_FILE, "name"),
        )
    description = _string(meta, "description", required=True, limit=MAX_DESCRIPTION_LENGTH)
    _string(meta, "license", required=False, limit=None)
    _string(meta, "compatibility", required=False, limit=MAX_COMPATIBILITY_LENGTH)
    _string(meta, "allowed-tools", required=False, limit=None)
    metadata = meta.get("metadata")
    if metadata is not None and not (
        isinstance(metadata, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise InvalidSkill(
            '`metadata` maps string keys to string values (quote numbers: `version: "1.0"`).',
            field=file_field(SKILL_FILE, "metadata"),
        )
    return description, body


def body_warnings(body: str) -> list[str]:
    """The specification's recommendations for `SKILL.md`'s body (the frontmatter not
    included) that ``body`` misses: shown beside the editor, never a refusal."""
    warnings = []
    lines = len(body.splitlines())
    if lines > RECOMMENDED_BODY_LINES:
        warnings.append(
            f"`{SKILL_FILE}`'s body is {lines} lines; the specification recommends at most "
            f"{RECOMMENDED_BODY_LINES}: move detail into `references/`."
        )
    # About four characters a token.
    tokens = len(body) // 4
    if tokens > RECOMMENDED_BODY_TOKENS:
        warnings.append(
            f"`{SKILL_FILE}`'s body is about {tokens} tokens; the specification recommends "
            f"under {RECOMMENDED_BODY_TOKENS}: move detail into `references/`."
        )
    return warnings


def skill_body_warnings(files: Mapping[str, str]) -> list[str]:
    """`body_warnings` of a stored bundle's `SKILL.md`."""
    return body_warnings(split_frontmatter(files.get(SKILL_FILE, ""))[2])


def check_skill(*, name: str, files: object, max_file_bytes: int, max_bytes: int) -> CheckedSkill:
    """The bundle ``files`` (path to text) of the skill ``name``, checked: its layout, each
    file as any stored text (not binary, under the cap, no secret, no hidden character,
    a path nobody misreads) and `SKILL.md`'s frontmatter per the specification; over
    ``max_bytes`` in all is refused too. Raises naming the file; returns the bundle."""
    validate_skill_name(name)
    if not isinstance(files, dict):
        raise InvalidInput("`files` maps each file's path to its text.", field="files")
    if SKILL_FILE not in files:
        raise InvalidSkill(f"A skill needs a `{SKILL_FILE}`.", field=file_field(SKILL_FILE))
    if len(files) > MAX_FILES:
        raise InvalidSkill(
            f"A skill holds at most {MAX_FILES} files; this one has {len(files)}.", field="files"
        )
    paths = sorted(files)
    # The sizes first, so an oversized bundle is refused before any text is scanned.
    total = sum(
        _file_size(_check_path(path), files[path], max_file_bytes=max_file_bytes) for path in paths
    )
    if total > max_bytes:
        raise TooLarge(
            f"The skill's files are {total} bytes in all; a skill is at most {max_bytes} "
            "bytes (`AGENTDOCS_SKILL_MAX_BYTES`). Nothing was stored.",
            field="files",
            limit=max_bytes,
        )
    for path in paths:
        _refuse_unreadable(path, files[path])
    description, body = _check_frontmatter(files[SKILL_FILE], name=name)
    warnings = body_warnings(body)
    ordered = {path: files[path] for path in sorted(files)}
    return CheckedSkill(
        files=ordered,
        description=description,
        size=total,
        sha256=bundle_sha256(ordered),
        warnings=warnings,
    )
