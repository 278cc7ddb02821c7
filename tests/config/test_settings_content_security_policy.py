"""Every response carries the Content-Security-Policy: pages, the API, the admin."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from django.template.loader import render_to_string

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def _policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {
        name: values
        for name, *values in (part.split() for part in header.split(";") if part.strip())
    }


def test_pages_the_api_and_the_admin_carry_the_policy(client, api, reader, project):
    client.force_login(reader)
    responses = [
        client.get("/"),
        client.get("/t/acme/web/"),
        client.get("/login/"),
        client.get("/t/acme/nope/"),  # a 404 page too
        client.get("/admin/login/"),
        api(reader).get("/api/v1/tenants/acme/"),
        api().get("/api/v1/ping"),  # a refusal too
        api(reader).get("/api/v1/no-such-endpoint"),
    ]
    for response in responses:
        policy = _policy(response)
        assert policy["default-src"] == ["'self'"]
        assert policy["script-src"] == ["'self'"]  # no inline script, no eval
        assert policy["style-src"][0] == "'self'"
        assert "'unsafe-inline'" not in policy["style-src"]
        assert policy["img-src"] == ["'self'", "data:"]
        assert policy["object-src"] == ["'none'"]
        assert policy["base-uri"] == ["'self'"]
        assert policy["form-action"] == ["'self'"]
        assert policy["frame-ancestors"] == ["'none'"]


def test_the_500_pages_style_element_is_allowed_by_its_hash(client):
    page = render_to_string("500.html")
    (css,) = re.findall(r"<style>(.*?)</style>", page, flags=re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in _policy(client.get("/login/"))["style-src"]


def test_no_template_has_an_inline_script_or_style_element():
    for template in TEMPLATES.rglob("*.html"):
        text = template.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), template
        assert not re.search(r"\son[a-z]+=", text), template  # no onclick= handlers
        if template.name != "500.html":
            assert "<style" not in text, template


def test_the_api_docs_page_allows_its_own_style_element_and_no_inline_script(client, reader):
    client.force_login(reader)
    page = client.get("/api/docs/")
    assert page.status_code == 200
    assert "<script>" not in page.content.decode()  # the start-up script is a file
    policy = _policy(page)
    assert policy["style-src"] == ["'self'", "'unsafe-inline'"]
    assert policy["script-src"] == ["'self'"]
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
