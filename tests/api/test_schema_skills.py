"""schemathesis against the skills' operations in `/api/schema/`: whatever it sends,
valid and invalid by the schema, the answer is no 500, its status is documented, its
body and content type are those the schema gives, and what the schema forbids is
refused. Bounded examples; slow."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from agentdocs.services import skills as skill_service
from tests.conftest import api_token_key
from tests.skill_bundles import skill_md

schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
schema.app = get_wsgi_application()

OPERATIONS = schema.include(path_regex=r"/skills/")
CHECKS = [
    negative_data_rejection,
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def admin_key(db, admin, project):
    for name in ("handoff", "review"):
        skill_service.skill_create(
            project=project, name=name, files={"SKILL.md": skill_md(name)}, user=admin
        )
    return api_token_key(admin)


@pytest.fixture(autouse=True)
def _connections_kept_through_requests():
    """As Django's test client does: the WSGI app would otherwise close the database
    connection at each request's start and end, and with it the test's transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.slow
@OPERATIONS.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_the_skills_api_answers_as_its_schema_says(case, admin_key):
    case.call_and_validate(headers={"Authorization": f"Bearer {admin_key}"}, checks=CHECKS)
