"""A key's id names its public key (issue 34, finding 6): `agentdocs verify` refuses a
keys.json whose entry lists a public key under an id that is not derived from it, so a
forger cannot pass off their own key under the server's key's id."""

from __future__ import annotations

import json
from pathlib import Path

from agentdocs.core import signing
from tests.services.test_signing import run_cli

TEXT = "# Rules\n\nShip it.\n"
RENDERED_AT = "2026-01-02T00:00:00+00:00"


def _entry(key_id: str, public: bytes) -> signing.PublicKey:
    return {
        "key_id": key_id,
        "algorithm": "Ed25519",
        "public_key": signing.b64url(public),
        "created_at": "2026-01-01T00:00:00+00:00",
        "retired_at": None,
        "valid_from": "2026-01-01T00:00:00+00:00",
        "valid_until": None,
    }


def _signed(pair: signing.KeyPair, key_id: str) -> str:
    claim = signing.block_claim(
        key_id=key_id,
        tenant="acme",
        project="web",
        process="run-1",
        text=TEXT,
        rendered_at=RENDERED_AT,
    )
    return signing.claim_sign(pair, claim)


def _write(tmp_path: Path, keys: list[signing.PublicKey]) -> tuple[Path, Path]:
    block = tmp_path / "block.md"
    block.write_text(TEXT, encoding="utf-8")
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"algorithm": "Ed25519", "keys": keys}))
    return block, path


def test_a_forgers_key_listed_under_the_servers_key_id_is_refused(tmp_path):
    server_id, _server = signing.key_generate()
    forger_id, forger = signing.key_generate()
    forged_pair = signing.KeyPair(server_id, forger)  # the forger's key, the server's id
    token = _signed(forged_pair, server_id)
    block, keys = _write(tmp_path, [_entry(server_id, forged_pair.public_bytes)])

    result = run_cli("verify", str(block), "--signature", token, "--keys", str(keys), cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert b"valid: " not in result.stdout
    message = result.stderr.decode()
    assert message.startswith("invalid: refusing the keys:")
    assert f"The key {server_id} does not name its public key, whose id is {forger_id}" in message


def test_a_key_entry_renamed_to_another_id_is_refused_though_its_signature_verifies(tmp_path):
    key_id, private = signing.key_generate()
    pair = signing.KeyPair(key_id, private)
    token = _signed(pair, key_id)
    block, keys = _write(tmp_path, [_entry(key_id, pair.public_bytes)])
    ok = run_cli("verify", str(block), "--signature", token, "--keys", str(keys), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr

    # A second entry, renamed: the whole keys.json is refused.
    other_id, other = signing.key_generate()
    renamed = _entry("ed25519-0000000000000000", signing.KeyPair(other_id, other).public_bytes)
    block, keys = _write(tmp_path, [_entry(key_id, pair.public_bytes), renamed])
    refused = run_cli("verify", str(block), "--signature", token, "--keys", str(keys), cwd=tmp_path)
    assert refused.returncode == 1
    assert b"ed25519-0000000000000000 does not name its public key" in refused.stderr


def test_the_verdict_refuses_a_key_whose_id_is_not_its_public_keys():
    server_id, _ = signing.key_generate()
    _, forger = signing.key_generate()
    pair = signing.KeyPair(server_id, forger)
    token = _signed(pair, server_id)
    entry = _entry(server_id, pair.public_bytes)
    verdict = signing.token_verify(
        token, data=TEXT.encode("utf-8"), kind=signing.MEMORY_BLOCK, keys=[entry]
    )
    assert not verdict.valid
    assert "does not name its public key" in verdict.detail
    assert signing.key_id_refusal(entry) == verdict.detail
    assert signing.key_id_of(pair.public_bytes) != server_id
    genuine_id, genuine = signing.key_generate()
    assert signing.key_id_of(signing.KeyPair(genuine_id, genuine).public_bytes) == genuine_id
    assert signing.key_id_refusal({**entry, "public_key": "not base64!"}) is not None
