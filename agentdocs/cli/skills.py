"""`agentdocs skills`: list a project's skills, pull one into a folder, push a folder back.

    agentdocs skills list [--tenant T --project P]
    agentdocs skills pull NAME [DIR] [--force]
    agentdocs skills push DIR [--reason TEXT] [--force]

`list` prints one line per skill the project offers (its own, and its tenant's from
`_vance` that no skill of the same name replaces): name, version, where it is stored
and its description. `pull` writes the skill's folder (default `./NAME`): `SKILL.md`
and every bundled file, byte for byte as stored, and `.agentdocs-skill.json` beside
them, which remembers the tenant, project, name, version and digest it was pulled at.
`push` sends the folder's files (every file but hidden ones, whose names start with a
dot) as the skill's next version, based on the version that file remembers, or
creates the skill when the project has none of that name (its name is the folder's,
as the Agent Skills format wants).

Conflicts are refused, never overwritten, as for documents: a push based on a version
the server has moved past exits 1 saying so (pull again, or `--force` to base the
push on the server's current version and replace it); a push to a skill the folder
was not pulled from, or to the tenant's skill of that name through a project, exits 1
too (`--force` replaces it, or creates the project's own that replaces the tenant's).
A pull over a folder that holds changes made since its last pull exits 1 (`--force`
overwrites them). A binary file (not UTF-8, a binary type, control characters) is
refused before anything is sent, naming the file.

Exit codes: 0 done, 1 refused (a conflict, a binary file, the server refused the
skill: its message is printed), 2 for usage errors and a server that cannot be
reached. Tenant and project come from `--tenant`/`--project`, the environment, or the
folder's `.agentdocs-skill.json`. No Django here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from agentdocs.cli.base import (
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    ConnectionFailed,
    ServerClient,
    ServerRefused,
    add_server_arguments,
    command,
    require,
    write,
)
from agentdocs.core.errors import InvalidSkill
from agentdocs.core.skills import SKILL_FILE, binary_reason, bundle_sha256, validate_skill_name

STATE_FILE = ".agentdocs-skill.json"
PAGE_SIZE = 200
MAX_PAGES = 50


def _configure_skills(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the skills the project offers")
    add_server_arguments(listing)
    pull = actions.add_parser("pull", help="write a skill's folder: SKILL.md and its files")
    pull.add_argument("name", metavar="NAME")
    pull.add_argument("dir", metavar="DIR", nargs="?", help="the folder (default: ./NAME)")
    pull.add_argument(
        "--force", action="store_true", help="overwrite changes made in the folder since its pull"
    )
    add_server_arguments(pull)
    push = actions.add_parser("push", help="send a skill's folder as its next version")
    push.add_argument("dir", metavar="DIR", help="the skill's folder (its name is the skill's)")
    push.add_argument("--reason", default="", help="why: kept in the skill's history")
    push.add_argument(
        "--force",
        action="store_true",
        help="replace what the server has even if the folder was not based on it",
    )
    add_server_arguments(push)


# The folder


def read_state(folder: Path) -> dict[str, Any]:
    """What `.agentdocs-skill.json` remembers of the folder's last pull or push ({} if none)."""
    try:
        state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        raise CommandError(
            f"{folder / STATE_FILE} is not what `agentdocs skills pull` wrote: remove it",
            exit_code=EXIT_USAGE,
        ) from None
    return state if isinstance(state, dict) else {}


def write_state(folder: Path, args: argparse.Namespace, skill: dict[str, Any]) -> None:
    state = {
        "tenant": args.tenant,
        "project": args.project,
        "name": skill["name"],
        "version": skill["version"],
        "sha256": skill["sha256"],
    }
    text = json.dumps(state, indent=2, sort_keys=True) + "\n"
    (folder / STATE_FILE).write_bytes(text.encode("utf-8"))


def read_folder(folder: Path) -> tuple[dict[str, str], list[str]]:
    """The skill's files in ``folder`` (path with `/` to text) and the hidden ones left
    out; a file that is not text is refused, naming it."""
    files: dict[str, str] = {}
    hidden: list[str] = []
    for entry in sorted(folder.rglob("*")):
        path = entry.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in path.split("/")):
            if entry.is_file() and path != STATE_FILE:
                hidden.append(path)
            continue
        if not entry.is_file():
            continue
        try:
            text = entry.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            why: str | None = "it is not UTF-8 text"
        except OSError as error:
            raise CommandError(
                f"cannot read {path}: {error.strerror}", exit_code=EXIT_USAGE
            ) from None
        else:
            why = binary_reason(path, text)
        if why is not None:
            raise CommandError(
                f"{path} is not a text file ({why}); a skill bundles text files only. "
                "Nothing was pushed."
            )
        files[path] = text
    return files, hidden


def _inside(path: object) -> str:
    """A server-given file path, refused unless it stays inside the skill's folder."""
    parts = PurePosixPath(path).parts if isinstance(path, str) else ()
    if (
        not isinstance(path, str)
        or not parts
        or PurePosixPath(path).is_absolute()
        or ".." in parts
        or "\\" in path
        or "\x00" in path
        or path != "/".join(parts)
    ):
        raise CommandError(f"the server sent a file path outside the skill's folder: {path!r}")
    return path


def _write_files(folder: Path, files: dict[str, str], old: dict[str, str]) -> None:
    for path in sorted(set(old) - set(files)):
        (folder / path).unlink()
        parent = (folder / path).parent
        while parent != folder and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    for path, text in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))


# The server


def _defaults_from_state(args: argparse.Namespace, state: dict[str, Any]) -> None:
    for name in ("tenant", "project"):
        if not getattr(args, name, None) and isinstance(state.get(name), str):
            setattr(args, name, state[name])


def _skills_path(args: argparse.Namespace, rest: str = "") -> str:
    return ServerClient.project_path(args.tenant, args.project, f"skills/{rest}")


def _request(client: ServerClient, method: str, path: str, **kwargs: Any) -> Any:
    try:
        return client.request(method, path, **kwargs)
    except ConnectionFailed as error:
        raise CommandError(error.message, exit_code=EXIT_USAGE) from None


def _server_skill(client: ServerClient, args: argparse.Namespace, name: str) -> Any:
    """The skill as the project offers it, or None when it offers none of that name."""
    try:
        return _request(client, "GET", _skills_path(args, quote(name, safe="")))
    except ServerRefused as refused:
        if refused.status == 404 and refused.field == "name":
            return None
        raise


def _connect(args: argparse.Namespace) -> ServerClient:
    require(args, "url", "token", "tenant", "project")
    return ServerClient.from_args(args)


def _list(args: argparse.Namespace) -> int:
    client = _connect(args)
    path: str | None = _skills_path(args) + f"?page_size={PAGE_SIZE}"
    lines: list[str] = []
    for _ in range(MAX_PAGES):
        if path is None:
            break
        page = _request(client, "GET", path)
        for item in page["results"]:
            where = "" if item["project"] == args.project else f"  (from {item['project']})"
            description = " ".join(str(item["description"]).split())
            lines.append(f"{item['name']}  v{item['version']}{where}  {description}\n")
        path = page.get("next")
    if not lines:
        write(sys.stderr, f"{args.project} offers no skill\n")
    write(sys.stdout, "".join(lines))
    return EXIT_OK


def _pull(args: argparse.Namespace) -> int:
    validate_name(args.name)
    folder = Path(args.dir or args.name)
    state = read_state(folder) if folder.is_dir() else {}
    _defaults_from_state(args, state)
    local, _hidden = read_folder(folder) if folder.is_dir() else ({}, [])
    client = _connect(args)
    skill = _server_skill(client, args, args.name)
    if skill is None:
        raise CommandError(f"{args.project} offers no skill {args.name!r}")
    # The folder's files are what was pulled last, or already the server's: nothing lost.
    known = {state.get("sha256"), skill["sha256"]}
    if local and not args.force and bundle_sha256(local) not in known:
        why = (
            "holds changes made since its last pull"
            if state
            else "holds files `agentdocs skills pull` did not write"
        )
        raise CommandError(
            f"{folder} {why}: push them first, or pull with --force to overwrite them"
        )
    files = {_inside(item["path"]): str(item["content"]) for item in skill["files"]}
    folder.mkdir(parents=True, exist_ok=True)
    _write_files(folder, files, local)
    write_state(folder, args, skill)
    where = "" if skill["project"] == args.project else f" (from {skill['project']})"
    write(sys.stdout, f"pulled {skill['name']} v{skill['version']}{where} into {folder}\n")
    for warning in skill.get("warnings", []):
        write(sys.stderr, f"warning: {warning}\n")
    return EXIT_OK


def validate_name(name: str) -> str:
    try:
        return validate_skill_name(name)
    except InvalidSkill as error:
        raise CommandError(
            f"{name!r} is not a skill's name: {error.detail}", exit_code=EXIT_USAGE
        ) from None


def _write_or_propose(
    client: ServerClient,
    args: argparse.Namespace,
    name: str,
    method: str,
    path: str,
    payload: dict[str, Any],
    *,
    base: int,
) -> Any:
    """The written skill; or None when the skill is under `review.required` (409
    `review_required`): then the files are proposed as a change request
    (`POST .../changes/`, based on ``base``, 0 for a new skill), said on stdout. The
    folder stays based on the version it was."""
    try:
        return _request(client, method, path, json=payload)
    except ServerRefused as refused:
        if refused.status != 409 or refused.code != "review_required":
            raise
    change = _request(
        client,
        "POST",
        ServerClient.project_path(args.tenant, args.project, "changes/"),
        json={
            "skill": name,
            "files": payload["files"],
            "base_version": base,
            "reason": args.reason,
        },
    )
    write(
        sys.stdout,
        f"proposed {name} as change #{change.get('id')} for review (review.required): "
        f"{change.get('url')}\n",
    )
    return None


def _push(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if not (folder / SKILL_FILE).is_file():
        raise CommandError(f"{folder} holds no {SKILL_FILE}", exit_code=EXIT_USAGE)
    state = read_state(folder)
    _defaults_from_state(args, state)
    name = validate_name(folder.resolve().name)
    files, hidden = read_folder(folder)
    for path in hidden:
        write(sys.stderr, f"skipped {path} (a hidden file)\n")
    client = _connect(args)
    current = _server_skill(client, args, name)
    payload: dict[str, Any] = {"files": files, "reason": args.reason}
    if current is None or (current["project"] != args.project and args.force):
        created = _write_or_propose(
            client, args, name, "POST", _skills_path(args), {"name": name, **payload}, base=0
        )
        if created is None:
            return EXIT_OK
        write_state(folder, args, created)
        write(sys.stdout, f"created {name} v{created['version']} in {args.project}\n")
        return EXIT_OK
    if current["project"] != args.project:
        raise CommandError(
            f"{name!r} is the tenant's skill (from {current['project']}): push with "
            f"--project {current['project']} to change it for every project, or with "
            f"--force to create {args.project}'s own {name!r} that replaces it"
        )
    if bundle_sha256(files) == current["sha256"]:
        base = current["version"]  # the server's files already: nothing to overwrite
    elif state.get("name") == name and isinstance(state.get("version"), int) and not args.force:
        base = state["version"]
    elif args.force:
        base = current["version"]
    else:
        raise CommandError(
            f"{args.project} has a skill {name!r} (v{current['version']}) this folder was not "
            "pulled from: pull it first and apply your change, or push with --force to "
            "replace it"
        )
    if base != current["version"]:
        raise CommandError(
            f"{name!r} changed on the server since v{base}, the version this folder is "
            f"based on: it is at v{current['version']}. Nothing was pushed: pull it again "
            "(save your changes first; the pull replaces them) or push with --force to "
            "replace the server's"
        )
    try:
        path = _skills_path(args, quote(name, safe=""))
        written = _write_or_propose(
            client, args, name, "PUT", path, {**payload, "version": base}, base=base
        )
    except ServerRefused as refused:
        if refused.status == 412:  # written between our read and our write
            raise CommandError(
                f"{name!r} changed on the server while pushing: {refused.message}"
            ) from None
        raise
    if written is None:
        return EXIT_OK
    write_state(folder, args, written)
    if written["version"] == base:
        write(sys.stdout, f"unchanged {name} v{base}: the server has these files\n")
    else:
        write(sys.stdout, f"pushed {name} v{written['version']}\n")
    for warning in written.get("warnings", []):
        write(sys.stderr, f"warning: {warning}\n")
    return EXIT_OK


@command(
    "skills",
    help="list a project's skills, pull one into a folder, push a folder back",
    configure=_configure_skills,
)
def run_skills(args: argparse.Namespace) -> int:
    if args.action == "list":
        return _list(args)
    if args.action == "pull":
        return _pull(args)
    return _push(args)
