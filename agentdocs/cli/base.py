"""What every `agentdocs` subcommand shares: exit codes, the error a command
reports, the subcommand registry, the connection options and the HTTP client.

A subcommand is a `Command` in `COMMANDS`: write a ``configure(parser)`` and a
``run(args) -> exit code`` and register them with ``@command(...)``;
`ServerClient` and `add_server_arguments` give it the connection options and the
JSON error handling the other commands use. No Django here.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any, TextIO
from urllib.parse import quote

from agentdocs.client import http

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


class ConnectionFailed(CommandError):
    """The server could not be reached at all (as opposed to answering with an error)."""


class ServerRefused(CommandError):
    """The server answered with an error (4xx or 5xx); ``status`` is its HTTP status,
    ``code`` its body's `error` (`review_required`, ...), if any."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        exit_code: int = EXIT_FAILURE,
        field: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, exit_code=exit_code)
        self.status = status
        self.field = field
        self.code = code


class Command:
    """A subcommand: its name, help, arguments and what runs it. A plain class, as are
    the others on `agentdocs hook context`'s path: `dataclasses` imports `inspect`, a
    tenth of the hook's imports (bench/README.md, `hook_context.py`)."""

    __slots__ = ("configure", "help", "name", "run")

    def __init__(
        self,
        name: str,
        help: str,
        configure: Callable[[argparse.ArgumentParser], None],
        run: Callable[[argparse.Namespace], int],
    ) -> None:
        self.name = name
        self.help = help
        self.configure = configure
        self.run = run


COMMANDS: dict[str, Command] = {}


def command(
    name: str, *, help: str, configure: Callable[[argparse.ArgumentParser], None]
) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register ``run`` as the subcommand ``name``."""

    def register(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = Command(name=name, help=help, configure=configure, run=run)
        return run

    return register


def write(stream: TextIO, text: str) -> None:
    """Write UTF-8 whatever the locale says, so a block never dies on a character."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
        return
    stream.flush()
    buffer.write(text.encode("utf-8"))
    buffer.flush()


# Talking to the server


def add_server_arguments(
    parser: argparse.ArgumentParser, *, project: bool = True, timeout: float | None = None
) -> None:
    """The connection options; ``timeout``, when given, shows `--timeout` with that
    default (the commands that serve a cached block when the server is slow)."""
    env = os.environ
    parser.add_argument(
        "--url",
        default=env.get("AGENTDOCS_URL"),
        help="the server, such as http://127.0.0.1:8000 (default: $AGENTDOCS_URL)",
    )
    parser.add_argument(
        "--token",
        default=env.get("AGENTDOCS_TOKEN"),
        help="an API token, from the API tokens page or `manage.py token_create USER` "
        "(default: $AGENTDOCS_TOKEN)",
    )
    parser.add_argument(
        "--tenant", default=env.get("AGENTDOCS_TENANT"), help="default: $AGENTDOCS_TENANT"
    )
    if project:
        parser.add_argument(
            "--project", default=env.get("AGENTDOCS_PROJECT"), help="default: $AGENTDOCS_PROJECT"
        )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_SECONDS if timeout is None else timeout,
        metavar="SECONDS",
        help=argparse.SUPPRESS
        if timeout is None
        else f"how long to wait for the server before serving the cached block "
        f"(default: {timeout:g})",
    )


def require(args: argparse.Namespace, *names: str) -> None:
    missing = [name for name in names if not getattr(args, name, None)]
    if missing:
        options = ", ".join(f"--{name}" for name in missing)
        variables = ", ".join(f"AGENTDOCS_{name.upper()}" for name in missing)
        raise CommandError(f"{options} missing (or set {variables})", exit_code=EXIT_USAGE)


class ServerClient:
    """The agentdocs REST API, v1, authenticated with a token."""

    def __init__(self, url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self.base = url.rstrip("/") + "/api/v1/"
        self.timeout = timeout
        self.session = http.Session({"Authorization": f"Bearer {token}"})

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServerClient:
        require(args, "url", "token")
        return cls(args.url, args.token, timeout=args.timeout)

    @staticmethod
    def project_path(tenant: str, project: str, rest: str) -> str:
        return f"tenants/{quote(tenant, safe='')}/projects/{quote(project, safe='')}/{rest}"

    def request(self, method: str, path: str, *, json: object = None) -> Any:
        """The decoded JSON of a successful response; CommandError with the server's error.

        ``json`` is the request body, if any; ``path`` is from the API's base, or a whole
        URL the server gave (a page's `next`). The answer is typed Any: it is whatever
        JSON the operation returns, and each command reads the keys it needs.
        """
        url = path if path.startswith(("http://", "https://")) else self.base + path
        try:
            response = self.session.request(method, url, timeout=self.timeout, json=json)
        except http.TransportError as error:
            raise ConnectionFailed(f"cannot reach {url}: {error}") from None
        if response.status_code >= 400:
            raise ServerRefused(
                self.describe_error(response),
                status=response.status_code,
                field=self.error_field(response),
                code=self.error_field(response, key="error"),
            )
        try:
            return response.json()
        except ValueError:
            raise CommandError(
                f"the server answered {response.status_code} with something that is not JSON"
            ) from None

    @staticmethod
    def error_field(response: http.Response, key: str = "field") -> str | None:
        """The field an error names (its body's `field`; or its ``key``), if any."""
        try:
            body = response.json()
        except ValueError:
            return None
        field = body.get(key) if isinstance(body, dict) else None
        return field if isinstance(field, str) else None

    @staticmethod
    def describe_error(response: http.Response) -> str:
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
