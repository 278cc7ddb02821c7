"""Page tests use Django's test client signed in as one of the cast."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.fixture
def browse():
    """``browse(user)`` is a test client signed in as that user (CSRF checks on)."""

    def make(user=None, *, csrf_checks: bool = False) -> Client:
        client = Client(enforce_csrf_checks=csrf_checks)
        if user is not None:
            client.force_login(user)
        return client

    return make


@pytest.fixture
def agent_md(project, writer, make_document):
    return make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n", user=writer)


@pytest.fixture
def vance_md(vance, admin, make_document):
    return make_document(vance, "agent.md", "# Acme rules\n\n- Be kind.\n", user=admin)
