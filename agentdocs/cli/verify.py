"""`agentdocs verify` and `agentdocs verify-record`: check the server's signatures offline.

    agentdocs verify BLOCK_FILE --signature SIG [--keys FILE | --url URL]
    agentdocs verify-record RECORD.json [--signature SIG] [--keys FILE | --url URL]

`verify` checks that BLOCK_FILE holds exactly the Memory Block text the server
signed: SIG is the render's `Agentdocs-Signature` header (or its JSON `signature`).
`verify-record` checks a binding record as the API answers it (`agentdocs bind`
prints it; its `signature` is inside), or an archived record with `--signature`.
The public keys are the server's `/.well-known/agentdocs/keys.json`, fetched from
URL (no token needed), or read from FILE, a saved copy, for a check with no network.

Every key listed must be named by its own public key (`key_id` is derived from
`public_key`); a keys.json with one that is not is refused, exit 1.

Exit 0 when the signature is valid, 1 when it is not (or the keys are refused), 2 when
the check could not be made (a missing file, a malformed signature, no keys). No Django
here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from agentdocs.cli.base import (
    DEFAULT_TIMEOUT_SECONDS,
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    command,
    write,
)
from agentdocs.client import http
from agentdocs.core import signing

KEYS_PATH = "/.well-known/agentdocs/keys.json"
_KEY_FIELDS = ("key_id", "algorithm", "public_key", "valid_from", "valid_until")


def _usage_error(message: str) -> CommandError:
    return CommandError(message, exit_code=EXIT_USAGE)


def _read_bytes(path: str, what: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise _usage_error(f"cannot read the {what} {path}: {error.strerror}") from None


def _json(data: bytes, where: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _usage_error(f"{where} is not UTF-8 JSON") from None


def _keys_document(args: argparse.Namespace) -> Any:
    if args.keys:
        return _json(_read_bytes(args.keys, "keys file"), f"the keys file {args.keys}")
    if not args.url:
        raise _usage_error("--keys FILE or --url URL missing (or set AGENTDOCS_URL)")
    url = args.url.rstrip("/") + KEYS_PATH
    try:
        response = http.get(url, timeout=args.timeout)
    except http.TransportError as error:
        raise _usage_error(f"cannot reach {url}: {error}") from None
    if response.status_code != 200:
        raise _usage_error(f"{url} answered HTTP {response.status_code}")
    return _json(response.content, url)


def _published_keys(args: argparse.Namespace) -> list[signing.PublicKey]:
    document = _keys_document(args)
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list) or not all(
        isinstance(key, dict) and all(name in key for name in _KEY_FIELDS) for key in keys
    ):
        raise _usage_error(
            "the keys are not a keys.json document ({keys: [{key_id, algorithm, public_key, "
            "valid_from, valid_until}]})"
        )
    return keys


def _configure_keys(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keys", metavar="FILE", help="a saved copy of the server's keys.json (no network)"
    )
    parser.add_argument(
        "--url",
        default=os.environ.get("AGENTDOCS_URL"),
        help="the server whose published keys to use (default: $AGENTDOCS_URL)",
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS, help=argparse.SUPPRESS
    )


def _report(verdict: signing.Verdict) -> int:
    claim = verdict.claim
    where = ""
    if claim is not None:
        process = f", process {claim['process']}" if claim["process"] else ""
        where = f" ({claim['tenant']}/{claim['project']}{process})"
    if verdict.valid:
        write(sys.stdout, f"valid: {verdict.detail}{where}\n")
        return EXIT_OK
    write(sys.stderr, f"invalid: {verdict.detail}{where}\n")
    return EXIT_FAILURE


def _verify(token: str, *, data: bytes, kind: signing.Kind, args: argparse.Namespace) -> int:
    try:
        signing.token_decode(token)
    except signing.MalformedToken as error:
        raise _usage_error(f"the signature cannot be read: {error}") from None
    keys = _published_keys(args)
    for key in keys:
        refusal = signing.key_id_refusal(key)
        if refusal is not None:
            write(sys.stderr, f"invalid: refusing the keys: {refusal}\n")
            return EXIT_FAILURE
    return _report(signing.token_verify(token, data=data, kind=kind, keys=keys))


def _configure_block(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("block_file", metavar="BLOCK_FILE", help="the block text ('-': stdin)")
    parser.add_argument(
        "--signature", required=True, metavar="SIG", help="the Agentdocs-Signature value"
    )
    _configure_keys(parser)


@command(
    "verify",
    help="Check a Memory Block's text against the server's signature, offline.",
    configure=_configure_block,
)
def run_verify(args: argparse.Namespace) -> int:
    data = _read_bytes(args.block_file, "block file")
    return _verify(args.signature, data=data, kind=signing.MEMORY_BLOCK, args=args)


def _configure_record(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "record_file", metavar="RECORD.json", help="the record as the API answers it ('-': stdin)"
    )
    parser.add_argument(
        "--signature", metavar="SIG", help="the signature, when the file carries none"
    )
    _configure_keys(parser)


@command(
    "verify-record",
    help="Check a binding record against the server's signature, offline.",
    configure=_configure_record,
)
def run_verify_record(args: argparse.Namespace) -> int:
    path = args.record_file
    document = _json(_read_bytes(path, "record file"), f"the record file {path}")
    if not isinstance(document, dict):
        raise _usage_error(f"the record file {path} is not a JSON object")
    record, carried = signing.record_from_answer(document)
    token = args.signature or carried
    if not token:
        raise _usage_error(f"the record file {path} carries no signature: pass --signature")
    data = signing.canonical_json(record)
    return _verify(token, data=data, kind=signing.BINDING_RECORD, args=args)
