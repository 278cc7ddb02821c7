import pytest

pytestmark = pytest.mark.django_db


def test_document_lifecycle(api, project, writer, outsider, other_tenant):
    client = api(writer)
    base = "/api/v1/tenants/acme/projects/web"
    r = client.post(
        f"{base}/documents/",
        {"path": "agent.md", "body": "# Rules\n", "reason": "first"},
        format="json",
    )
    assert r.status_code == 201, r.json()
    etag = r["ETag"]
    r = client.put(
        f"{base}/documents/agent.md",
        {"body": "# Rules\n- two\n", "reason": "more"},
        format="json",
        HTTP_IF_MATCH=etag,
    )
    assert r.status_code == 200, r.json()
    assert r.json()["version"] == 2
    r = client.put(
        f"{base}/documents/agent.md", {"body": "stale"}, format="json", HTTP_IF_MATCH=etag
    )
    assert r.status_code == 412 and r.json()["current_version"] == 2
    r = api(outsider).get(f"{base}/documents/agent.md")
    assert r.status_code == 404
    r = client.get(f"{base}/history/agent.md")
    assert [e["version"] for e in r.json()["results"]] == [2, 1]
    r = client.get(f"{base}/diff/agent.md?from=1&to=2")
    assert "+- two" in r.json()["diff"]
