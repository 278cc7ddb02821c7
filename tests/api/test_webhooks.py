"""The webhooks API: tenant admins only, the secret shown once, bad input refused by
field, and another tenant's admin sees none of it."""

from __future__ import annotations

import json

import pytest
from standardwebhooks import Webhook as Verifier

from agentdocs.models import Delivery, Event, Webhook
from agentdocs.services import events as event_service

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/webhooks/"


@pytest.fixture(autouse=True)
def _in_process(celery_eager, settings):
    settings.AGENTDOCS_WEBHOOK_RETRY_SCHEDULE = (0.1,)


def _create(api, admin, url, **extra):
    body = {"url": url, "events": ["document.updated"], **extra}
    response = api(admin).post(BASE, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_create_shows_the_secret_once_and_never_again(api, admin, tenant, webhook_receiver):
    created = _create(api, admin, webhook_receiver.url, description="CI", projects=None)
    assert created["secret"].startswith("whsec_")
    Verifier(created["secret"])  # a key the package takes
    assert created["events"] == ["document.updated"] and created["projects"] is None
    assert created["active"] and not created["failing"] and created["last_delivery"] is None
    assert created["created_by"] == "alice"

    listed = api(admin).get(BASE).json()["results"]
    shown = api(admin).get(f"{BASE}{created['id']}").json()
    patched = api(admin).patch(f"{BASE}{created['id']}", {"description": "x"}, format="json")
    for body in (listed[0], shown, patched.json()):
        assert "secret" not in body
        assert created["secret"] not in str(body)


def test_rotating_the_secret_answers_the_new_one_once(api, admin, tenant, webhook_receiver):
    created = _create(api, admin, webhook_receiver.url)
    response = api(admin).patch(f"{BASE}{created['id']}", {"rotate_secret": True}, format="json")
    assert response.status_code == 200
    rotated = response.json()["secret"]
    assert rotated.startswith("whsec_") and rotated != created["secret"]
    assert Webhook.objects.get(pk=created["id"]).secret == rotated


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://example.com/hook"}, "url"),
        ({"url": "https://user:pw@example.com/hook"}, "url"),
        ({"url": "https://example.com:99999/"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": 5}, "url"),
        ({"url": None}, "url"),
        ({"events": []}, "events"),
        ({"events": ["document.exploded"]}, "events"),
        ({"events": "document.updated"}, "events"),
        ({"events": [1]}, "events"),
        ({"projects": ["nope"]}, "projects"),
        ({"projects": "web"}, "projects"),
        ({"description": "x" * 501}, "description"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_input_is_refused_naming_its_field_and_nothing_is_made(
    api, admin, tenant, project, body, field
):
    full = {"url": "https://example.com/hook", "events": ["document.updated"], **body}
    response = api(admin).post(BASE, full, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert not Webhook.objects.exists()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://10.0.0.5/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/hook",
        "http://[fd00:ec2::254]/",
        "http://2130706433/",
        "http://localhost:8000/",
    ],
)
def test_a_private_address_is_refused_when_not_allowed(api, admin, tenant, settings, url):
    settings.AGENTDOCS_WEBHOOK_ALLOW_PRIVATE = False
    response = api(admin).post(BASE, {"url": url, "events": ["ping"]}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "url"
    settings.AGENTDOCS_WEBHOOK_ALLOW_PRIVATE = True
    assert api(admin).post(BASE, {"url": url, "events": ["ping"]}, format="json").status_code == 201


def test_patch_refuses_bad_input_and_changes_nothing(api, admin, tenant, webhook_receiver):
    created = _create(api, admin, webhook_receiver.url)
    for body, field in [
        ({"url": "gopher://x"}, "url"),
        ({"events": ["nope"]}, "events"),
        ({"active": "yes"}, "active"),
        ({"rotate_secret": 1}, "rotate_secret"),
        ({"secret": "whsec_mine"}, "secret"),
    ]:
        response = api(admin).patch(f"{BASE}{created['id']}", body, format="json")
        assert response.status_code == 400 and response.json()["field"] == field, body
    webhook = Webhook.objects.get(pk=created["id"])
    assert webhook.url == webhook_receiver.url and webhook.secret == created["secret"]


def test_members_who_are_not_admins_get_403(api, admin, writer, reader, tenant, webhook_receiver):
    created = _create(api, admin, webhook_receiver.url)
    hook = f"{BASE}{created['id']}"
    for user in (writer, reader):
        client = api(user)
        assert client.get(BASE).status_code == 403
        assert client.post(BASE, {"url": "https://e.com/", "events": ["ping"]}).status_code == 403
        assert client.get(hook).status_code == 403
        assert client.patch(hook, {"active": False}, format="json").status_code == 403
        assert client.delete(hook).status_code == 403
        assert client.post(f"{hook}/test").status_code == 403
        assert client.get(f"{hook}/deliveries/").status_code == 403
    assert Webhook.objects.get().active and not Delivery.objects.exists()


def test_another_tenants_admin_sees_none_of_it(
    api, admin, outsider, tenant, other_tenant, webhook_receiver
):
    created = _create(api, admin, webhook_receiver.url)
    delivery = api(admin).post(f"{BASE}{created['id']}/test").json()
    hook = f"{BASE}{created['id']}"
    client = api(outsider)
    for response in (
        client.get(BASE),
        client.post(BASE, {"url": "https://e.com/", "events": ["ping"]}, format="json"),
        client.get(hook),
        client.patch(hook, {"active": False}, format="json"),
        client.delete(hook),
        client.post(f"{hook}/test"),
        client.get(f"{hook}/deliveries/"),
        client.post(f"{hook}/deliveries/{delivery['id']}/redeliver"),
    ):
        assert response.status_code == 404, response.content
    # Nor under its own tenant's path: the webhook is not globex's.
    theirs = "/api/v1/tenants/globex/webhooks/"
    assert client.get(f"{theirs}{created['id']}").status_code == 404
    assert client.get(f"{theirs}{created['id']}/deliveries/").status_code == 404
    assert client.get(theirs).json()["results"] == []
    assert Webhook.objects.get().active and Delivery.objects.count() == 1


def test_test_queues_a_ping_and_the_log_shows_it_once_swept(
    api, admin, tenant, webhook_receiver, django_capture_on_commit_callbacks, sweep_webhooks
):
    created = _create(api, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        response = api(admin).post(f"{BASE}{created['id']}/test")
    assert response.status_code == 202
    delivery = response.json()
    # Queued: answered without waiting on the receiver, which has been sent nothing.
    assert delivery["type"] == "ping" and delivery["state"] == "pending"
    assert delivery["attempt"] == 0 and delivery["attempts"] == []
    assert webhook_receiver.received == []
    pending = api(admin).get(f"{BASE}{created['id']}/deliveries/").json()["results"]
    assert [(d["id"], d["state"]) for d in pending] == [(delivery["id"], "pending")]

    assert sweep_webhooks() == [delivery["id"]]
    body, headers = webhook_receiver.received[0]
    assert Verifier(created["secret"]).verify(body, headers)["id"] == delivery["event_id"]

    log = api(admin).get(f"{BASE}{created['id']}/deliveries/").json()
    assert log["count"] == 1
    entry = log["results"][0]
    assert entry["id"] == delivery["id"] and entry["state"] == "succeeded"
    assert entry["status_code"] == 200 and entry["attempt"] == 1 and entry["error"] == ""
    assert set(entry) >= {
        "id",
        "event_id",
        "type",
        "status_code",
        "duration_ms",
        "error",
        "attempt",
        "next_retry_at",
        "state",
        "at",
        "attempts",
    }
    assert entry["attempts"][0]["attempt"] == 1 and entry["attempts"][0]["response_body"] == "ok"
    listed = api(admin).get(BASE).json()["results"][0]
    assert listed["last_delivery"]["state"] == "succeeded"


def test_a_writers_put_sends_nothing_and_the_sweep_delivers_to_every_webhook(
    api,
    admin,
    writer,
    tenant,
    project,
    make_document,
    webhook_receiver,
    settings,
    django_capture_on_commit_callbacks,
    sweep_webhooks,
):
    """Issue 23, finding 4: three subscriptions to a slow receiver held a PUT 15 s."""
    settings.AGENTDOCS_WEBHOOK_TIMEOUT_SECONDS = 1.0
    webhook_receiver.answer(*[(None, "slow")] * 3)  # each held until released
    hooks = sorted(_create(api, admin, webhook_receiver.url)["id"] for _ in range(3))
    make_document(project, "agent.md", "one\n")
    with django_capture_on_commit_callbacks(execute=True):
        response = api(writer).put(
            "/api/v1/tenants/acme/projects/web/documents/agent.md",
            {"body": "two\n", "version": 1, "reason": "more"},
            format="json",
        )
    assert response.status_code == 200 and response.json()["version"] == 2
    # Answered with the receiver sent nothing: the deliveries wait in the outbox.
    assert webhook_receiver.received == []
    waiting = list(Delivery.objects.order_by("webhook_id"))
    assert [d.webhook_id for d in waiting] == hooks
    assert {(d.state, d.attempts, d.enqueued_for) for d in waiting} == {("pending", 0, None)}

    webhook_receiver.release()
    assert sorted(sweep_webhooks()) == sorted(d.pk for d in waiting)
    assert len(webhook_receiver.received) == 3
    assert set(Delivery.objects.values_list("state", "attempts")) == {("succeeded", 1)}
    assert sweep_webhooks() == []  # sent once


def test_past_the_cap_a_webhook_is_refused_with_409_and_nothing_is_made(
    api, admin, outsider, tenant, other_tenant, webhook_receiver
):
    for _ in range(20):
        _create(api, admin, webhook_receiver.url)
    body = {"url": webhook_receiver.url, "events": ["ping"]}
    response = api(admin).post(BASE, body, format="json")
    assert response.status_code == 409, response.content
    refusal = response.json()
    assert refusal["error"] == "too_many_webhooks" and refusal["limit"] == 20
    assert "AGENTDOCS_MAX_WEBHOOKS_PER_TENANT" in refusal["detail"]
    assert Webhook.objects.filter(tenant=tenant).count() == 20
    assert Event.objects.filter(type="webhook.created").count() == 20
    # The outsider is told nothing of acme's webhooks, and globex's cap is its own.
    assert api(outsider).post(BASE, body, format="json").status_code == 404
    theirs = api(outsider).post("/api/v1/tenants/globex/webhooks/", body, format="json")
    assert theirs.status_code == 201
    # Deleting one makes room for another.
    first = Webhook.objects.filter(tenant=tenant).earliest("pk")
    assert api(admin).delete(f"{BASE}{first.pk}").status_code == 204
    assert api(admin).post(BASE, body, format="json").status_code == 201


def test_turned_off_webhooks_count_towards_the_cap(api, admin, tenant, settings, webhook_receiver):
    settings.AGENTDOCS_MAX_WEBHOOKS_PER_TENANT = 2
    for _ in range(2):
        created = _create(api, admin, webhook_receiver.url)
        api(admin).patch(f"{BASE}{created['id']}", {"active": False}, format="json")
    response = api(admin).post(BASE, {"url": webhook_receiver.url, "events": ["ping"]})
    assert response.status_code == 409 and response.json()["limit"] == 2
    assert Webhook.objects.count() == 2


def test_the_log_shows_retries_and_redeliver_resends_with_the_same_id(
    api,
    admin,
    tenant,
    project,
    webhook_receiver,
    django_capture_on_commit_callbacks,
    sweep_webhooks,
):
    webhook_receiver.default = (500, "no")
    created = _create(api, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        event = event_service.emit(
            type="document.updated", tenant=tenant, project=project, actor=admin, target="a.md"
        )
    sweep_webhooks()
    log = api(admin).get(f"{BASE}{created['id']}/deliveries/").json()["results"]
    assert [(d["event_id"], d["state"], d["status_code"]) for d in log] == [
        (event.id, "retrying", 500)
    ]
    assert log[0]["next_retry_at"] is not None and log[0]["error"] == "HTTP 500"

    webhook_receiver.default = (204, "")
    with django_capture_on_commit_callbacks(execute=True):
        response = api(admin).post(f"{BASE}{created['id']}/deliveries/{log[0]['id']}/redeliver")
    assert response.status_code == 202 and len(webhook_receiver.received) == 1
    sweep_webhooks()
    redelivered = api(admin).get(f"{BASE}{created['id']}/deliveries/").json()["results"]
    assert [(d["state"], d["attempt"]) for d in redelivered] == [("succeeded", 2)]
    assert [h["Webhook-Id"] for _, h in webhook_receiver.received] == [event.id, event.id]
    missing = api(admin).post(f"{BASE}{created['id']}/deliveries/999999/redeliver")
    assert missing.status_code == 404


def test_a_turned_off_webhook_refuses_test_and_redeliver(api, admin, tenant, webhook_receiver):
    created = _create(api, admin, webhook_receiver.url)
    ping = api(admin).post(f"{BASE}{created['id']}/test").json()
    api(admin).patch(f"{BASE}{created['id']}", {"active": False}, format="json")
    assert api(admin).post(f"{BASE}{created['id']}/test").json()["error"] == "webhook_disabled"
    response = api(admin).post(f"{BASE}{created['id']}/deliveries/{ping['id']}/redeliver")
    assert response.status_code == 409
    shown = api(admin).get(f"{BASE}{created['id']}").json()
    assert not shown["active"] and shown["disabled_reason"] == "Turned off by alice."


def test_delete_removes_the_webhook_and_its_log(api, admin, tenant, webhook_receiver):
    created = _create(api, admin, webhook_receiver.url)
    api(admin).post(f"{BASE}{created['id']}/test")
    assert api(admin).delete(f"{BASE}{created['id']}").status_code == 204
    assert not Webhook.objects.exists() and not Delivery.objects.exists()
    assert api(admin).get(f"{BASE}{created['id']}").status_code == 404


def test_a_write_scoped_token_of_an_admin_is_refused(tenant, admin):
    from rest_framework.test import APIClient

    from agentdocs.services import tokens as token_service

    key = token_service.token_create(user=admin, name="w", scopes=["read", "write"]).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get(BASE).status_code == 403


@pytest.mark.parametrize("count", [2, 12])
def test_the_lists_run_a_constant_number_of_queries(
    api,
    admin,
    tenant,
    webhook_receiver,
    django_assert_num_queries,
    django_capture_on_commit_callbacks,
    sweep_webhooks,
    count,
):
    client = api(admin)
    client.get("/api/v1/ping")  # the token's first use
    first = _create(api, admin, webhook_receiver.url)
    for _ in range(count):
        other = _create(api, admin, webhook_receiver.url)
        with django_capture_on_commit_callbacks(execute=True):
            client.post(f"{BASE}{first['id']}/test")
            client.post(f"{BASE}{other['id']}/test")
    sweep_webhooks()
    with django_assert_num_queries(4):  # access, count, page, last deliveries
        assert len(client.get(BASE).json()["results"]) == count + 1
    with django_assert_num_queries(5):  # access, webhook, count, page, attempts
        deliveries = client.get(f"{BASE}{first['id']}/deliveries/").json()["results"]
    assert len(deliveries) == count and all(d["attempts"] for d in deliveries)


WEBHOOK_BODIES = [
    {"url": "https://e.com/", "events": ["ping"], "projects": [None, 5, {"a": 1}]},
    {"url": "https://e.com/", "events": [["ping"]], "projects": None},
    {"url": "https://e.com/\x00", "events": ["ping"]},
    {"url": "https://\ud800.com/", "events": ["\ud800"], "description": "\x00"},
    {"url": "http://[::1", "events": ["ping"]},
    {"url": "http://" + "a" * 300 + ".com/", "events": ["ping"] * 10_000},
    {"url": "https://e.com/", "events": ["ping"], "projects": ["web"] * 500},
    {"active": None, "rotate_secret": None, "url": None, "events": None},
    {"description": ["x"], "projects": 5},
]


def test_no_input_to_the_webhook_operations_is_a_500(
    api, admin, tenant, project, webhook_receiver, django_capture_on_commit_callbacks
):
    from tests.api.test_errors_no_500 import BODIES, QUERIES, _assert_not_a_500

    created = _create(api, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        delivery = api(admin).post(f"{BASE}{created['id']}/test").json()
    hook = f"{BASE}{created['id']}"
    routes = [
        (BASE, ["GET", "POST"]),
        (hook, ["GET", "PATCH"]),
        (f"{hook}/test", ["POST"]),
        (f"{hook}/deliveries/", ["GET"]),
        (f"{hook}/deliveries/{delivery['id']}/redeliver", ["POST"]),
        (f"{BASE}x", ["GET", "PATCH", "DELETE"]),
        (f"{BASE}{'9' * 5000}/deliveries/", ["GET"]),
        (f"{hook}/deliveries/%C2%B2/redeliver", ["POST"]),
    ]
    client = api(admin)
    for url, methods in routes:
        for method in methods:
            for body in [*BODIES, *WEBHOOK_BODIES]:
                payload = json.dumps(body)
                response = client.generic(method, url, payload, content_type="application/json")
                _assert_not_a_500(response, f"{method} {url} {payload}")
        for query in QUERIES:
            if "GET" in methods:
                _assert_not_a_500(client.get(url + query), f"GET {url}{query}")
