"""Signatures: what the server signs, how, and how anyone checks it offline.

Pure Python over `cryptography` (no Django), so the command-line client verifies
with the very code the server signs with.

A signature travels as one compact, header-safe token::

    <base64url(payload)>.<base64url(Ed25519 signature over the payload bytes)>

The payload is canonical JSON (sorted keys, no spaces, UTF-8) of a small claim:
what was signed (``kind``), whose it is (tenant, project, process), the sha256 of
the signed bytes, when (``rendered_at`` for a Memory Block, ``signed_at`` for a
binding record) and with which key (``key_id``). The token
carries everything a verifier needs besides the signed text itself and the
published public keys (`/.well-known/agentdocs/keys.json`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, Literal, NotRequired, TypedDict

# Only what a verifier needs is imported here: the command-line hook verifies a block at
# every agent session's start. The sealing and the key export import theirs when used.
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALGORITHM = "Ed25519"
Kind = Literal["memory_block", "binding_record"]
MEMORY_BLOCK: Kind = "memory_block"
BINDING_RECORD: Kind = "binding_record"

# What the key that encrypts private keys at rest is derived for; a new purpose, a new key.
_SEAL_INFO = b"agentdocs signing key at rest v1"
_NONCE_BYTES = 12


def canonical_json(value: object) -> bytes:
    """Sorted keys, no insignificant white space, UTF-8: the same value, the same bytes."""
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict base64url without padding; ValueError on anything else."""
    if not text or any(c not in _B64URL for c in text):
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error:
        raise ValueError("not base64url") from None


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


# Keys


class KeyPair:
    """A signing key and its id. (Plain classes here, not dataclasses: the hook imports
    this module at every agent session's start, and `dataclasses` imports `inspect`.)"""

    __slots__ = ("key_id", "private")

    def __init__(self, key_id: str, private: Ed25519PrivateKey) -> None:
        self.key_id = key_id
        self.private = private

    @property
    def public_bytes(self) -> bytes:
        return _raw_public_bytes(self.private)


def _raw_public_bytes(private: Ed25519PrivateKey) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id_of(public: bytes) -> str:
    """A key's id: ``ed25519-`` and the first 16 hex digits of the sha256 of its raw
    public key, so an id names exactly one key."""
    return f"ed25519-{sha256_hex(public)[:16]}"


def key_generate() -> tuple[str, Ed25519PrivateKey]:
    """A new Ed25519 key and its id (`key_id_of`)."""
    private = Ed25519PrivateKey.generate()
    return key_id_of(_raw_public_bytes(private)), private


def _sealing_key(secret: str, key_id: str) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(
        algorithm=hashes.SHA256(), length=32, salt=key_id.encode("utf-8"), info=_SEAL_INFO
    ).derive(secret.encode("utf-8"))


def private_key_seal(private: Ed25519PrivateKey, *, secret: str, key_id: str) -> str:
    """The private key encrypted at rest: AES-256-GCM under a key derived (HKDF-SHA256)
    from ``secret`` and the key id, the id bound as associated data; base64url of
    nonce and ciphertext."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    raw = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    nonce = os.urandom(_NONCE_BYTES)
    sealed = AESGCM(_sealing_key(secret, key_id)).encrypt(nonce, raw, key_id.encode("utf-8"))
    return b64url(nonce + sealed)


class KeyUnsealError(Exception):
    """A stored private key cannot be decrypted: the secret it was sealed with changed."""


def private_key_unseal(sealed: str, *, secret: str, key_id: str) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        data = b64url_decode(sealed)
        raw = AESGCM(_sealing_key(secret, key_id)).decrypt(
            data[:_NONCE_BYTES], data[_NONCE_BYTES:], key_id.encode("utf-8")
        )
    except (ValueError, InvalidTag):
        raise KeyUnsealError(
            f"The signing key {key_id} cannot be decrypted: AGENTDOCS_SIGNING_KEY (or "
            "SECRET_KEY) is not the one it was stored with."
        ) from None
    return Ed25519PrivateKey.from_private_bytes(raw)


# Signing


class Claim(TypedDict):
    """The signed payload. ``process`` is None for a preview; ``sha256`` is of the block's
    UTF-8 text, or of a binding record's canonical JSON. The time is ``rendered_at`` in a
    Memory Block's claim and ``signed_at`` in a binding record's: exactly one of them."""

    kind: Kind
    tenant: str
    project: str
    process: str | None
    sha256: str
    rendered_at: NotRequired[str]
    signed_at: NotRequired[str]
    key_id: str


def claim_time(claim: Claim) -> str:
    """When the claim was made: a block's ``rendered_at``, a record's ``signed_at``."""
    return claim.get("rendered_at") or claim.get("signed_at") or ""


def claim_sign(key: KeyPair, claim: Claim) -> str:
    """The token for ``claim`` (whose key_id must be ``key``'s)."""
    if claim["key_id"] != key.key_id:
        raise ValueError("The claim names another key.")
    payload = canonical_json(claim)
    return f"{b64url(payload)}.{b64url(key.private.sign(payload))}"


def block_claim(
    *,
    key_id: str,
    tenant: str,
    project: str,
    process: str | None,
    text: str,
    rendered_at: str,
    sha256: str | None = None,
) -> Claim:
    """The claim over a Memory Block's ``text``; ``sha256``: the text's, when the caller
    has it (a render hashed its text already)."""
    return {
        "kind": MEMORY_BLOCK,
        "tenant": tenant,
        "project": project,
        "process": process,
        "sha256": sha256 if sha256 is not None else sha256_hex(text.encode("utf-8")),
        "rendered_at": rendered_at,
        "key_id": key_id,
    }


def record_claim(*, key_id: str, record: Mapping[str, Any], signed_at: str) -> Claim:
    """The claim over a binding record (`context-binding/v1`): its own tenant, project
    and process, and the sha256 of its canonical JSON."""
    return {
        "kind": BINDING_RECORD,
        "tenant": str(record["tenant"]),
        "project": str(record["project"]),
        "process": str(record["process"]),
        "sha256": sha256_hex(canonical_json(dict(record))),
        "signed_at": signed_at,
        "key_id": key_id,
    }


# Verifying


class PublicKey(TypedDict):
    """One entry of `keys.json`: validity is when the key may have signed."""

    key_id: str
    algorithm: str
    public_key: str  # base64url of the raw 32 bytes
    created_at: str
    retired_at: str | None
    valid_from: str
    valid_until: str | None


class Verdict:
    """Whether a signature is valid, why in words, and its claim when it could be read."""

    __slots__ = ("claim", "detail", "valid")

    def __init__(self, valid: bool, detail: str, claim: Claim | None = None) -> None:
        self.valid = valid
        self.detail = detail
        self.claim = claim

    def __repr__(self) -> str:
        return f"Verdict({self.valid!r}, {self.detail!r})"


class MalformedToken(ValueError):
    """Not a signature token at all (as opposed to a token that does not verify)."""


def key_id_refusal(key: PublicKey) -> str | None:
    """Why a published key cannot be trusted as listed: its ``key_id`` is not the id its
    ``public_key`` derives (`key_id_of`), so a keys.json could pass off another key under
    the server's key's id. None when it is (or when the key is not Ed25519, which no
    signature is checked with)."""
    if key["algorithm"] != ALGORITHM:
        return None
    try:
        public = b64url_decode(key["public_key"])
    except (TypeError, ValueError):
        return f"The key {key['key_id']} has a public_key that is not base64url."
    derived = key_id_of(public)
    if derived != key["key_id"]:
        return (
            f"The key {key['key_id']} does not name its public key, whose id is {derived}: "
            "the keys were altered."
        )
    return None


def token_decode(token: str) -> tuple[Claim, bytes, bytes]:
    """The claim, the payload bytes and the signature bytes of ``token``."""
    parts = token.strip().split(".")
    if len(parts) != 2:
        raise MalformedToken("A signature is two base64url parts joined by a dot.")
    try:
        payload, signature = b64url_decode(parts[0]), b64url_decode(parts[1])
        claim = json.loads(payload.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise MalformedToken("The signature's payload is not base64url of JSON.") from None
    if not isinstance(claim, dict):
        raise MalformedToken("The signature's payload is not a JSON object.")
    time = "rendered_at" if claim.get("kind") == MEMORY_BLOCK else "signed_at"
    fields = ("kind", "tenant", "project", "process", "sha256", time, "key_id")
    # A block signed before blocks named their time rendered_at names it signed_at.
    accepted = {tuple(sorted(fields)), tuple(sorted({*fields} - {time} | {"signed_at"}))}
    if tuple(sorted(claim)) not in accepted:
        raise MalformedToken(f"The signature's payload must have exactly {', '.join(fields)}.")
    return claim, payload, signature  # type: ignore[return-value]  # checked above


def _time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def token_verify(token: str, *, data: bytes, kind: Kind, keys: Iterable[PublicKey]) -> Verdict:
    """Whether ``token`` is a valid signature of ``data`` (the block's UTF-8 text, or a
    record's canonical JSON) by one of ``keys``, made while that key was valid.

    MalformedToken when the token cannot be read at all."""
    claim, payload, signature = token_decode(token)
    if payload != canonical_json(claim):
        return Verdict(False, "The signed payload is not in canonical form.", claim)
    if claim["kind"] != kind:
        return Verdict(False, f"The signature is of a {claim['kind']}, not a {kind}.", claim)
    if claim["sha256"] != sha256_hex(data):
        return Verdict(False, "The content does not match the signed sha256.", claim)
    key = next((k for k in keys if k["key_id"] == claim["key_id"]), None)
    if key is None:
        return Verdict(False, f"No published key has the id {claim['key_id']}.", claim)
    if key["algorithm"] != ALGORITHM:
        return Verdict(False, f"The key {key['key_id']} is not an {ALGORITHM} key.", claim)
    try:
        public = Ed25519PublicKey.from_public_bytes(b64url_decode(key["public_key"]))
        public.verify(signature, payload)
    except (ValueError, InvalidSignature):
        return Verdict(False, f"The signature does not verify with the key {key['key_id']}.", claim)
    # A signature by the key listed, but a key listed under another key's id.
    refusal = key_id_refusal(key)
    if refusal is not None:
        return Verdict(False, refusal, claim)
    try:
        signed_at = _time(claim_time(claim))
        valid_from, valid_until = _time(key["valid_from"]), _time(key["valid_until"])
    except (TypeError, ValueError):
        return Verdict(False, "The signing time or the key's validity is not a time.", claim)
    assert signed_at is not None and valid_from is not None
    if signed_at < valid_from or (valid_until is not None and signed_at > valid_until):
        return Verdict(
            False,
            f"The key {key['key_id']} was not valid at {claim_time(claim)} "
            f"(valid from {key['valid_from']} until {key['valid_until'] or 'now'}).",
            claim,
        )
    return Verdict(True, f"Signed by {key['key_id']} at {claim_time(claim)}.", claim)


# What the API adds around a stored binding record; the rest is the record as signed.
RECORD_ENVELOPE = ("id", "archive", "signature")


def record_from_answer(document: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The signed record out of an API answer for one binding record, and the answer's
    signature token (None when it carries none, such as an archived record)."""
    record = {name: value for name, value in document.items() if name not in RECORD_ENVELOPE}
    signature = document.get("signature")
    return record, signature if isinstance(signature, str) else None


def validity_until(retired_at: datetime | None, grace: timedelta) -> datetime | None:
    """Until when a key may have signed: processes keep a key for up to ``grace`` after
    it was retired (their in-process cache), so its last signatures still verify."""
    return None if retired_at is None else retired_at + grace
