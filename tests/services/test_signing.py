"""Signed Memory Blocks and binding records (issue 30): the server signs, the published
keys verify, the CLI checks offline; a changed byte fails, a rotation keeps old
signatures valid, and the render's hot path reads nothing more."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings

from agentdocs.core import signing
from agentdocs.models import BindingRecord, SigningKey
from agentdocs.selectors import signing as signing_selectors
from agentdocs.services import signing as signing_keys

REPO = Path(__file__).resolve().parents[2]
URL = "/api/v1/tenants/acme/projects/web/memory-block/"
BINDINGS = "/api/v1/tenants/acme/projects/web/bindings/"
KEYS = "/.well-known/agentdocs/keys.json"


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None):
    base = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    base["PYTHONPATH"] = str(REPO)
    base.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "-m", "agentdocs.cli", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        timeout=60,
    )


@pytest.fixture
def agents(project, make_document):
    make_document(project, "agent.md", "# Rules\n\nBe careful with the café.\n")
    make_document(project, "AGENTS.md", "# Agents\n")
    return project


def _render_text(client, process: str = "run-1"):
    return client.post(URL, {"process": process}, format="json", HTTP_ACCEPT="text/plain")


def _save_keys(client, tmp_path: Path) -> Path:
    path = tmp_path / "keys.json"
    path.write_bytes(client.get(KEYS).content)
    return path


def test_a_rendered_block_verifies_with_the_cli_and_a_changed_byte_fails(
    api, reader, agents, tmp_path
):
    client = api(reader)
    response = _render_text(client)
    assert response.status_code == 200
    signature = response["Agentdocs-Signature"]
    block = tmp_path / "block.md"
    block.write_bytes(response.content)
    keys = _save_keys(api(), tmp_path)

    ok = run_cli("verify", str(block), "--signature", signature, "--keys", str(keys), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert b"valid: Signed by ed25519-" in ok.stdout
    assert b"(acme/web, process run-1)" in ok.stdout

    changed = bytearray(response.content)
    changed[-2] ^= 0x01
    block.write_bytes(bytes(changed))
    bad = run_cli("verify", str(block), "--signature", signature, "--keys", str(keys), cwd=tmp_path)
    assert bad.returncode == 1
    assert b"invalid: The content does not match the signed sha256." in bad.stderr


def test_the_json_answer_carries_the_same_kind_of_signature_over_its_text(api, reader, agents):
    response = api(reader).post(URL, {"process": "run-2"}, format="json")
    body = response.json()
    assert body["signature"] == response["Agentdocs-Signature"]
    keys = api().get(KEYS).json()["keys"]
    verdict = signing.token_verify(
        body["signature"], data=body["text"].encode("utf-8"), kind="memory_block", keys=keys
    )
    assert verdict.valid, verdict.detail
    assert verdict.claim is not None
    assert verdict.claim["process"] == "run-2"
    assert verdict.claim["tenant"] == "acme"
    assert verdict.claim["sha256"] == body["sha256"]


def test_a_block_claim_is_exactly_the_fields_the_contract_names(api, reader, agents):
    signature = api(reader).post(URL, {"process": "run-3"}, format="json")["Agentdocs-Signature"]
    claim, payload, _ = signing.token_decode(signature)
    assert sorted(claim) == sorted(
        ["kind", "tenant", "project", "process", "sha256", "rendered_at", "key_id"]
    )
    assert claim["kind"] == "memory_block" and claim["process"] == "run-3"
    assert payload == signing.canonical_json(claim)


def test_a_block_signed_with_signed_at_before_rendered_at_still_verifies():
    key_id, private = signing.key_generate()
    pair = signing.KeyPair(key_id=key_id, private=private)
    claim = signing.block_claim(
        key_id=key_id,
        tenant="acme",
        project="web",
        process="p",
        text="hi",
        rendered_at="2026-01-02T00:00:00+00:00",
    )
    older = {k: v for k, v in claim.items() if k != "rendered_at"} | {
        "signed_at": claim["rendered_at"]
    }
    token = signing.claim_sign(pair, older)  # type: ignore[arg-type]
    published: signing.PublicKey = {
        "key_id": key_id,
        "algorithm": "Ed25519",
        "public_key": signing.b64url(pair.public_bytes),
        "created_at": "2026-01-01T00:00:00+00:00",
        "retired_at": None,
        "valid_from": "2026-01-01T00:00:00+00:00",
        "valid_until": None,
    }
    assert signing.token_verify(token, data=b"hi", kind="memory_block", keys=[published]).valid
    both = signing.claim_sign(pair, {**older, "rendered_at": "2026-01-02T00:00:00+00:00"})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(signing.MalformedToken):
        signing.token_verify(both, data=b"hi", kind="memory_block", keys=[published])


def test_a_preview_is_signed_and_its_etag_does_not_change_with_the_signing_time(
    api, reader, agents
):
    client = api(reader)
    first, second = client.get(URL), client.get(URL)
    assert first["ETag"] == second["ETag"]
    claim, _, _ = signing.token_decode(first["Agentdocs-Signature"])
    assert claim["process"] is None
    assert client.get(URL, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304


def test_after_rotation_old_blocks_still_verify_and_new_ones_use_the_new_key(
    api, reader, agents, tmp_path
):
    client = api(reader)
    old = _render_text(client)
    call_command("signing_key_rotate", stdout=io.StringIO())
    new = _render_text(client, process="run-3")
    keys = api().get(KEYS).json()["keys"]
    assert [key["retired_at"] is None for key in keys] == [False, True]
    old_claim = signing.token_decode(old["Agentdocs-Signature"])[0]
    new_claim = signing.token_decode(new["Agentdocs-Signature"])[0]
    assert old_claim["key_id"] == keys[0]["key_id"] != new_claim["key_id"] == keys[1]["key_id"]
    for response in (old, new):
        verdict = signing.token_verify(
            response["Agentdocs-Signature"], data=response.content, kind="memory_block", keys=keys
        )
        assert verdict.valid, verdict.detail


def test_the_cli_fetches_the_published_keys_from_the_server(live_server, reader, agents, tmp_path):
    import requests

    from tests.conftest import api_token_key

    token = api_token_key(reader)
    response = requests.post(
        live_server.url + URL,
        json={"process": "run-4"},
        headers={"Authorization": f"Bearer {token}", "Accept": "text/plain"},
        timeout=30,
    )
    block = tmp_path / "block.md"
    block.write_bytes(response.content)
    signature = response.headers["Agentdocs-Signature"]
    env = {"AGENTDOCS_URL": live_server.url}
    ok = run_cli("verify", str(block), "--signature", signature, cwd=tmp_path, env=env)
    assert ok.returncode == 0, ok.stderr
    # Not a signature at all, or no server to ask: the check could not be made.
    garbled = run_cli("verify", str(block), "--signature", "nonsense", cwd=tmp_path, env=env)
    assert garbled.returncode == 2
    assert b"the signature cannot be read" in garbled.stderr
    unreachable = run_cli(
        "verify", str(block), "--signature", signature, "--url", "http://127.0.0.1:9", cwd=tmp_path
    )
    assert unreachable.returncode == 2
    assert b"cannot reach" in unreachable.stderr


def test_a_binding_record_verifies_and_an_edited_one_does_not(api, writer, agents, tmp_path):
    client = api(writer)
    response = client.post(
        BINDINGS, {"manifest": {"local": ["AGENTS.md"]}, "process": "run-5"}, format="json"
    )
    assert response.status_code == 201, response.content
    stored = BindingRecord.objects.get()
    assert stored.signature and response.json()["signature"] == stored.signature
    assert response.json()["process"] == "run-5"
    record = tmp_path / "record.json"
    record.write_bytes(client.get(f"{BINDINGS}{stored.pk}").content)
    keys = _save_keys(api(), tmp_path)

    ok = run_cli("verify-record", str(record), "--keys", str(keys), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr

    edited = json.loads(record.read_text())
    edited["process"] = "run-0"
    record.write_text(json.dumps(edited, indent=2))
    bad = run_cli("verify-record", str(record), "--keys", str(keys), cwd=tmp_path)
    assert bad.returncode == 1
    assert b"does not match the signed sha256" in bad.stderr

    # A block's signature is not a record's.
    block_signature = _render_text(api(writer))["Agentdocs-Signature"]
    swapped = {**json.loads(client.get(f"{BINDINGS}{stored.pk}").content)}
    swapped["signature"] = block_signature
    record.write_text(json.dumps(swapped))
    wrong = run_cli("verify-record", str(record), "--keys", str(keys), cwd=tmp_path)
    assert wrong.returncode == 1
    assert b"is of a memory_block, not a binding_record" in wrong.stderr


def test_the_keys_are_public_and_list_validity(client, agents, api, reader):
    _render_text(api(reader))
    response = client.get(KEYS)
    assert response.status_code == 200
    document = response.json()
    assert document["algorithm"] == "Ed25519"
    (key,) = document["keys"]
    assert set(key) == {
        "key_id",
        "algorithm",
        "public_key",
        "created_at",
        "retired_at",
        "valid_from",
        "valid_until",
    }
    assert key["valid_until"] is None
    assert len(signing.b64url_decode(key["public_key"])) == 32


def test_the_private_key_is_stored_sealed_and_a_new_secret_rotates_it(db, settings):
    pair = signing_keys.signing_key_active()
    row = SigningKey.objects.get()
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    raw = pair.private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    assert signing.b64url(raw) not in row.private_key_sealed
    assert raw.hex() not in row.private_key_sealed
    with pytest.raises(signing.KeyUnsealError, match="cannot be decrypted"):
        signing.private_key_unseal(row.private_key_sealed, secret="another", key_id=row.key_id)
    # With another secret the stored key cannot sign: it is retired, still published,
    # and a new key signs.
    signing_keys.signing_key_forget()
    with override_settings(AGENTDOCS_SIGNING_KEY="another secret"):
        again = signing_keys.signing_key_active()
    assert again.key_id != pair.key_id
    row.refresh_from_db()
    assert row.retired_at is not None
    assert [key["key_id"] for key in signing_selectors.published_keys()] == [
        pair.key_id,
        again.key_id,
    ]


def test_the_first_render_loads_the_key_and_later_ones_read_nothing_more(
    api, reader, agents, django_assert_num_queries, settings
):
    settings.AGENTDOCS_RENDER_CACHE = False
    client = api(reader)
    body = {"process": "run-6"}
    # The token with the caller's access, then the recipe, settings and documents (as
    # tests/api/test_memory_block.py counts), and on the very first render the key is
    # made: looked up, inserted in a savepoint.
    with django_assert_num_queries(2 + 4):
        assert client.post(URL, body, format="json").status_code == 200
    signing_keys.signing_key_forget()
    with django_assert_num_queries(2 + 1):  # a new process loads the existing key
        assert client.post(URL, body, format="json").status_code == 200
    with django_assert_num_queries(2):
        assert client.post(URL, body, format="json").status_code == 200


def test_a_key_does_not_verify_what_it_signed_outside_its_validity():
    key_id, private = signing.key_generate()
    pair = signing.KeyPair(key_id=key_id, private=private)
    claim = signing.block_claim(
        key_id=key_id,
        tenant="acme",
        project="web",
        process="p",
        text="hello",
        rendered_at="2026-01-02T00:00:00+00:00",
    )
    token = signing.claim_sign(pair, claim)
    published: signing.PublicKey = {
        "key_id": key_id,
        "algorithm": "Ed25519",
        "public_key": signing.b64url(pair.public_bytes),
        "created_at": "2026-01-01T00:00:00+00:00",
        "retired_at": "2026-01-01T12:00:00+00:00",
        "valid_from": "2026-01-01T00:00:00+00:00",
        "valid_until": "2026-01-01T12:01:00+00:00",
    }
    verdict = signing.token_verify(token, data=b"hello", kind="memory_block", keys=[published])
    assert not verdict.valid and "was not valid at" in verdict.detail
    still = {**published, "valid_until": None}
    assert signing.token_verify(token, data=b"hello", kind="memory_block", keys=[still]).valid
    other_id, other = signing.key_generate()
    forged = {**still, "public_key": signing.b64url(signing.KeyPair(other_id, other).public_bytes)}
    verdict = signing.token_verify(token, data=b"hello", kind="memory_block", keys=[forged])
    assert not verdict.valid and "does not verify" in verdict.detail


def test_a_retired_key_stays_valid_for_the_cache_window(db, settings):
    settings.AGENTDOCS_SIGNING_KEY_CACHE_SECONDS = 60
    old, _ = signing_keys.signing_key_rotate()
    assert old is None
    retired, _ = signing_keys.signing_key_rotate()
    assert retired is not None and retired.retired_at is not None
    listed = {key["key_id"]: key for key in signing_selectors.published_keys()}
    until = listed[retired.key_id]["valid_until"]
    assert until == (retired.retired_at + timedelta(seconds=60)).isoformat()
