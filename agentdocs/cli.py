"""`agentdocs`, the command-line client.

    agentdocs block --url URL --token TOKEN --tenant T --project P --process ID
                    [--recipe R] [--profile F] [--agent-file PATH | --no-agent-file] [--reset]
    agentdocs context DIR [--max-bytes N]

`block` renders the Memory Block for one turn of an agent process: it uploads
the first of VANCETOPE.md, AGENT.md, CLAUDE.md found in the working folder as
the client document, prints the block to stdout and one line per layer to
stderr. `context` runs the `.AGENTS/` loader on a local folder with the
server's rules. URL, token, tenant and project may come from AGENTDOCS_URL,
AGENTDOCS_TOKEN, AGENTDOCS_TENANT and AGENTDOCS_PROJECT.

No Django here: the client talks HTTP with `requests` and uses the pure
rendering core. A subcommand is a `Command` in `COMMANDS`: write a
``configure(parser)`` and a ``run(args) -> exit code`` and register them with
``@command(...)``; `ServerClient` and `add_server_arguments` give it the
connection options and the JSON error handling the other commands use.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests

from agentdocs.rendering.context import DEFAULT_BUDGET_BYTES, load_context_dir

AGENT_FILE_NAMES = ("VANCETOPE.md", "AGENT.md", "CLAUDE.md")
DEFAULT_TIMEOUT_SECONDS = 30.0

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class CommandError(Exception):
    """A failure to report on stderr; the message is for the person at the terminal."""

    def __init__(self, message: str, *, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: dict[str, Command] = {}


def command(
    name: str, *, help: str, configure: Callable[[argparse.ArgumentParser], None]
) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register ``run`` as the subcommand ``name``."""

    def register(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = Command(name=name, help=help, configure=configure, run=run)
        return run

    return register


def write(stream: Any, text: str) -> None:
    """Write UTF-8 whatever the locale says, so a block never dies on a character."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
        return
    stream.flush()
    buffer.write(text.encode("utf-8"))
    buffer.flush()


# Talking to the server


def add_server_arguments(parser: argparse.ArgumentParser, *, project: bool = True) -> None:
    env = os.environ
    parser.add_argument(
        "--url",
        default=env.get("AGENTDOCS_URL"),
        help="the server, such as http://127.0.0.1:8000 (default: $AGENTDOCS_URL)",
    )
    parser.add_argument(
        "--token",
        default=env.get("AGENTDOCS_TOKEN"),
        help="an API token, from `manage.py drf_create_token USER` (default: $AGENTDOCS_TOKEN)",
    )
    parser.add_argument(
        "--tenant", default=env.get("AGENTDOCS_TENANT"), help="default: $AGENTDOCS_TENANT"
    )
    if project:
        parser.add_argument(
            "--project", default=env.get("AGENTDOCS_PROJECT"), help="default: $AGENTDOCS_PROJECT"
        )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS, help=argparse.SUPPRESS
    )


def require(args: argparse.Namespace, *names: str) -> None:
    missing = [name for name in names if not getattr(args, name, None)]
    if missing:
        options = ", ".join(f"--{name}" for name in missing)
        raise CommandError(
            f"{options} missing (or set AGENTDOCS_{missing[0].upper()})", exit_code=EXIT_USAGE
        )


class ServerClient:
    """The agentdocs REST API, v1, authenticated with a token."""

    def __init__(self, url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self.base = url.rstrip("/") + "/api/v1/"
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServerClient:
        require(args, "url", "token")
        return cls(args.url, args.token, timeout=args.timeout)

    @staticmethod
    def project_path(tenant: str, project: str, rest: str) -> str:
        return f"tenants/{quote(tenant, safe='')}/projects/{quote(project, safe='')}/{rest}"

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """The decoded JSON of a successful response; CommandError with the server's error."""
        url = self.base + path
        try:
            response = self.session.request(method, url, timeout=self.timeout, **kwargs)
        except requests.RequestException as error:
            raise CommandError(f"cannot reach {url}: {error}") from None
        if response.status_code >= 400:
            raise CommandError(self.describe_error(response))
        try:
            return response.json()
        except ValueError:
            raise CommandError(
                f"the server answered {response.status_code} with something that is not JSON"
            ) from None

    @staticmethod
    def describe_error(response: requests.Response) -> str:
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and "detail" in body:
            where = f", field {body['field']}" if body.get("field") else ""
            code = body.get("error", "error")
            return f"{body['detail']} ({code}{where}; HTTP {response.status_code})"
        return f"HTTP {response.status_code} {response.reason}"


# agentdocs block


def find_agent_file(folder: Path) -> Path | None:
    for name in AGENT_FILE_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def read_client_document(path: Path) -> dict[str, str]:
    try:
        body = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise CommandError(f"cannot read the agent file {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CommandError(f"the agent file {path} is not UTF-8 text") from None
    return {"name": path.name, "body": body}


def layer_line(layer: dict[str, Any]) -> str:
    label = layer.get("path") or layer["kind"]
    return f"# layer {label} ({layer['bytes']}B, {layer['state']})\n"


def _configure_block(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    parser.add_argument(
        "--process",
        default=os.environ.get("AGENTDOCS_PROCESS"),
        help="the agent process id; later turns of the same process get stubs for what it "
        "already has (default: $AGENTDOCS_PROCESS)",
    )
    parser.add_argument("--recipe", help="a recipe of the tenant")
    parser.add_argument("--profile", help="a profile of the recipe")
    agent_file = parser.add_mutually_exclusive_group()
    agent_file.add_argument(
        "--agent-file",
        type=Path,
        metavar="PATH",
        help=f"upload this file instead of the first of {', '.join(AGENT_FILE_NAMES)} "
        "found in the working folder",
    )
    agent_file.add_argument(
        "--no-agent-file", action="store_true", help="upload no client document"
    )
    parser.add_argument(
        "--reset",
        action="store_true",
        help="forget what this process has received (after compacting its history)",
    )


@command("block", help="render the Memory Block for one turn", configure=_configure_block)
def run_block(args: argparse.Namespace) -> int:
    require(args, "url", "token", "tenant", "project", "process")
    client = ServerClient.from_args(args)
    if args.no_agent_file:
        agent_file = None
    elif args.agent_file is not None:
        agent_file = args.agent_file
    else:
        agent_file = find_agent_file(Path.cwd())
    payload: dict[str, Any] = {"process": args.process, "reset": args.reset}
    if args.recipe:
        payload["recipe"] = args.recipe
    if args.profile:
        payload["profile"] = args.profile
    if agent_file is not None:
        payload["client_document"] = read_client_document(agent_file)
    block = client.request(
        "POST", client.project_path(args.tenant, args.project, "memory-block/"), json=payload
    )
    write(sys.stdout, block["text"])
    write(sys.stderr, "".join(layer_line(layer) for layer in block["layers"]))
    return EXIT_OK


# agentdocs context


def _non_negative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return number


def _configure_context(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="the context folder, such as .AGENTS")
    parser.add_argument(
        "--max-bytes",
        type=_non_negative,
        metavar="N",
        default=DEFAULT_BUDGET_BYTES,
        help=f"the byte budget (default {DEFAULT_BUDGET_BYTES})",
    )


@command(
    "context", help="load a local .AGENTS/ folder as the server would", configure=_configure_context
)
def run_context(args: argparse.Namespace) -> int:
    loaded = load_context_dir(args.dir, budget_bytes=args.max_bytes)
    lines = [
        f"# context {source.document.path} ({source.bytes}B"
        f"{', truncated' if source.truncated else ''})\n"
        for source in loaded.sources
    ]
    lines += [f"# dropped {document.path} ({document.size}B)\n" for document in loaded.dropped]
    write(sys.stderr, "".join(lines))
    if loaded.rendered:
        write(sys.stdout, loaded.rendered + "\n")
    return EXIT_OK


# Entry point


def build_parser() -> argparse.ArgumentParser:
    # Registers `bind` and `outdated`: their module builds on this one, so it is
    # imported once this one is complete.
    from agentdocs import cli_bindings  # noqa: F401

    parser = argparse.ArgumentParser(
        prog="agentdocs", description="The agentdocs command-line client."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for entry in COMMANDS.values():
        subparser = subparsers.add_parser(entry.name, help=entry.help, description=entry.help)
        entry.configure(subparser)
        subparser.set_defaults(run=entry.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except CommandError as error:
        write(sys.stderr, f"agentdocs {args.command}: error: {error.message}\n")
        return error.exit_code


if __name__ == "__main__":
    # `python -m agentdocs.cli` runs this file as __main__, a second copy of the
    # module; run the imported one, whose registry the other modules fill.
    from agentdocs.cli import main as registered_main

    sys.exit(registered_main())
