"""Binding records keep how the run's block was served (`served_from`, `served_sha256`):
the offline client uploads a run it served from its cache with them."""

from __future__ import annotations

import hashlib

import pytest

from agentdocs.models import BindingRecord

BASE = "/api/v1/tenants/acme/projects/web/bindings/"
SHA = hashlib.sha256(b"# House rules\n").hexdigest()


def test_a_record_served_from_the_cache_keeps_it_and_its_signature_covers_it(
    api, reader, project, signing_key
):
    answer = api(reader).post(
        BASE,
        {"process": "run-1", "manifest": {}, "served_from": "cache", "served_sha256": SHA},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["served_from"] == "cache"
    assert answer.json()["served_sha256"] == SHA
    stored = BindingRecord.objects.get(pk=answer.json()["id"])
    assert (stored.record["served_from"], stored.record["served_sha256"]) == ("cache", SHA)
    detail = api(reader).get(f"{BASE}{stored.pk}").json()
    assert detail["served_from"] == "cache" and detail["signature"]


def test_a_record_that_says_nothing_has_no_served_fields(api, reader, project):
    answer = api(reader).post(BASE, {"process": "run-1", "manifest": {}}, format="json")
    assert answer.status_code == 201
    assert "served_from" not in answer.json() and "served_sha256" not in answer.json()


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"served_from": "disk", "served_sha256": SHA}, "served_from"),
        ({"served_from": "cache"}, "served_sha256"),
        ({"served_from": "cache", "served_sha256": SHA.upper()}, "served_sha256"),
        ({"served_from": "cache", "served_sha256": SHA[:63]}, "served_sha256"),
        ({"served_from": "cache", "served_sha256": 7}, "served_sha256"),
        ({"served_sha256": SHA}, "served_from"),
    ],
)
def test_bad_served_fields_are_400_naming_the_field_and_store_nothing(
    api, reader, project, extra, field
):
    answer = api(reader).post(BASE, {"process": "run-1", "manifest": {}, **extra}, format="json")
    assert answer.status_code == 400, answer.content
    assert answer.json()["field"] == field
    assert not BindingRecord.objects.exists()


def test_another_tenants_user_cannot_upload_a_served_record(api, outsider, other_tenant, project):
    answer = api(outsider).post(
        BASE,
        {"process": "run-1", "manifest": {}, "served_from": "cache", "served_sha256": SHA},
        format="json",
    )
    assert answer.status_code == 404
    assert not BindingRecord.objects.exists()
