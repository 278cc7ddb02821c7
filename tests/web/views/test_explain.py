"""The Explain page, beside Export: what a tool loads for a file."""

from __future__ import annotations

import pytest

from tests.web.views.test_export import scoped  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

EXPLAIN = "/t/acme/web/explain/"


def test_the_export_page_links_to_explain(browse, reader, project):
    assert f'href="{EXPLAIN}"' in browse(reader).get("/t/acme/web/export/").content.decode()


def test_explain_lists_the_files_in_load_order(browse, reader, agent_md, scoped):  # noqa: F811
    response = browse(reader).get(EXPLAIN, {"tool": "codex", "path": "src/api/handlers.py"})
    assert response.status_code == 200
    page = response.content.decode()
    assert page.index('data-explain-file="AGENTS.md"') < page.index(
        'data-explain-file="src/api/AGENTS.md"'
    )
    assert "its glob src/api/** matches src/api/handlers.py" in page
    closest = browse(reader).get(EXPLAIN, {"tool": "agents-md-readers", "path": "src/api/x.py"})
    assert "data-explain-shadowed" in closest.content.decode()


@pytest.mark.parametrize(
    ("query", "said"),
    [({"tool": "Cursor", "path": "a.py"}, "tool"), ({"tool": "codex", "path": "../x"}, "path")],
)
def test_bad_input_is_400_beside_its_field(browse, reader, project, query, said):
    response = browse(reader).get(EXPLAIN, query)
    assert response.status_code == 400
    assert f'id="{said}-error"' in response.content.decode()


def test_another_tenants_user_gets_404(browse, outsider, other_tenant, project):
    assert browse(outsider).get(EXPLAIN, {"tool": "codex", "path": "a.py"}).status_code == 404
