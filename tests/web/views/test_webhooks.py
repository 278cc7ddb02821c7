"""The webhook pages: tenant admins list, create (the secret shown on the next page
only), edit, test, rotate, delete and redeliver; other members get 403, other
tenants 404; a webhook disabled by its failures is flagged on the tenant page."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from agentdocs.models import Delivery, Webhook
from agentdocs.services import deliveries as delivery_service
from agentdocs.services import webhooks as webhook_service

pytestmark = pytest.mark.django_db

LIST = "/t/acme/-/webhooks/"


@pytest.fixture(autouse=True)
def _in_process(celery_eager):
    pass


@pytest.fixture
def hook(tenant, admin, webhook_receiver) -> Webhook:
    return webhook_service.webhook_create(
        tenant=tenant,
        url=webhook_receiver.url,
        events=["document.updated"],
        projects=None,
        user=admin,
    ).webhook


def test_creating_shows_the_secret_on_the_next_page_only(browse, admin, tenant, project):
    client = browse(admin)
    assert client.get(LIST).status_code == 200
    response = client.post(
        LIST,
        {
            "url": "https://hooks.example.com/agentdocs",
            "events": ["document.updated", "setting.changed"],
            "projects": "web",
            "description": "CI",
        },
    )
    assert response.status_code == 200
    webhook = Webhook.objects.get()
    assert webhook.events == ["document.updated", "setting.changed"]
    assert webhook.projects == ["web"] and webhook.created_by == admin
    page = response.content.decode()
    assert webhook.secret in page and "shown this once" in page
    assert "no-cache" in response["Cache-Control"] or "no-store" in response["Cache-Control"]
    for url in (LIST, f"{LIST}{webhook.pk}/"):
        assert webhook.secret not in client.get(url).content.decode()


def test_a_refused_url_is_shown_beside_its_field(browse, admin, tenant, settings):
    settings.AGENTDOCS_WEBHOOK_ALLOW_PRIVATE = False
    response = browse(admin).post(LIST, {"url": "http://10.0.0.1/", "events": ["ping"]})
    assert response.status_code == 400
    assert "it is a private address" in response.content.decode()
    assert not Webhook.objects.exists()
    response = browse(admin).post(LIST, {"url": "https://e.com/", "events": ["nope"]})
    assert response.status_code == 400 and not Webhook.objects.exists()


def test_past_the_cap_the_page_says_so_and_nothing_is_made(
    browse, admin, tenant, hook, settings, webhook_receiver
):
    settings.AGENTDOCS_MAX_WEBHOOKS_PER_TENANT = 1
    form = {"url": webhook_receiver.url, "events": ["ping"], "description": "one more"}
    response = browse(admin).post(LIST, form)
    assert response.status_code == 409
    page = response.content.decode()
    assert "The tenant has the most webhooks it may have (1," in page
    assert "A tenant has at most 1 webhook." in page
    assert list(Webhook.objects.all()) == [hook]


def test_editing_rotating_testing_redelivering_and_deleting(
    browse,
    admin,
    tenant,
    hook,
    webhook_receiver,
    django_capture_on_commit_callbacks,
    sweep_webhooks,
):
    client = browse(admin)
    page = f"{LIST}{hook.pk}/"
    response = client.post(
        page,
        {
            "url": webhook_receiver.url,
            "events": ["document.created"],
            "projects": "",
            "description": "edited",
            "active": "on",
        },
    )
    assert response.status_code == 302
    hook.refresh_from_db()
    assert hook.events == ["document.created"] and hook.description == "edited"

    old_secret = hook.secret
    rotated = client.post(f"{page}rotate/")
    hook.refresh_from_db()
    assert hook.secret != old_secret and hook.secret in rotated.content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        tested = client.post(f"{page}test/", follow=True)
    # Queued, not sent: the page answers without waiting on the receiver.
    assert "Queued a ping" in tested.content.decode() and webhook_receiver.received == []
    delivery = Delivery.objects.get(webhook=hook)
    assert delivery.event_type == "ping" and delivery.state == "pending"
    sweep_webhooks()
    delivery.refresh_from_db()
    assert delivery.state == "succeeded"
    shown = client.get(page).content.decode()
    assert delivery.event_id in shown and "Redeliver" in shown

    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"{page}deliveries/{delivery.pk}/redeliver/")
    assert len(webhook_receiver.received) == 1
    sweep_webhooks()
    delivery.refresh_from_db()
    assert delivery.attempts == 2 and len(webhook_receiver.received) == 2

    assert client.post(f"{page}delete/").status_code == 302
    assert not Webhook.objects.exists()


def test_members_get_403_and_other_tenants_404(
    browse, writer, reader, outsider, tenant, other_tenant, hook
):
    page = f"{LIST}{hook.pk}/"
    for user, status in ((writer, 403), (reader, 403), (outsider, 404)):
        client = browse(user)
        assert client.get(LIST).status_code == status
        assert client.post(LIST, {"url": "https://e.com/", "events": ["ping"]}).status_code == (
            status
        )
        assert client.get(page).status_code == status
        for action in ("test/", "rotate/", "delete/"):
            assert client.post(f"{page}{action}").status_code == status
    assert browse(outsider).get(f"/t/globex/-/webhooks/{hook.pk}/").status_code == 404
    assert Webhook.objects.count() == 1 and not Delivery.objects.exists()


def test_the_tenant_page_links_admins_to_webhooks_and_flags_disabled_ones(
    browse, admin, reader, tenant, hook
):
    assert "/-/webhooks/" in browse(admin).get("/t/acme/").content.decode()
    assert "/-/webhooks/" not in browse(reader).get("/t/acme/").content.decode()
    Webhook.objects.filter(pk=hook.pk).update(
        active=False,
        disabled_at=timezone.now(),
        failing_since=timezone.now(),
        disabled_reason="The last retry failed.",
    )
    tenant_page = browse(admin).get("/t/acme/").content.decode()
    assert "1 webhook disabled" in tenant_page
    assert "webhook disabled" not in browse(reader).get("/t/acme/").content.decode()
    listed = browse(admin).get(LIST).content.decode()
    assert "disabled: failing" in listed and "1 webhook disabled" in listed
    detail = browse(admin).get(f"{LIST}{hook.pk}/").content.decode()
    assert "The last retry failed." in detail


@pytest.mark.parametrize("count", [2, 15])
def test_the_pages_run_a_constant_number_of_queries(
    browse,
    admin,
    tenant,
    hook,
    webhook_receiver,
    django_assert_num_queries,
    count,
    django_capture_on_commit_callbacks,
):
    for _ in range(count):
        other = webhook_service.webhook_create(
            tenant=tenant, url=webhook_receiver.url, events=["ping"], projects=None, user=admin
        ).webhook
        with django_capture_on_commit_callbacks(execute=True):
            delivery_service.webhook_test(webhook=other, user=admin)
            delivery_service.webhook_test(webhook=hook, user=admin)
    client = browse(admin)
    client.get(LIST)
    # session, user, access, count, page, last deliveries
    with django_assert_num_queries(6):
        body = client.get(LIST).content.decode()
    assert len(re.findall(r'href="/t/acme/-/webhooks/\d+/"', body)) == count + 1
    # session, user, access, webhook, count, page, attempts
    with django_assert_num_queries(7):
        client.get(f"{LIST}{hook.pk}/")


def test_no_input_to_the_webhook_pages_is_a_500(
    browse, admin, tenant, hook, django_capture_on_commit_callbacks
):
    from tests.web.test_pages_no_500 import FORMS, QUERIES

    with django_capture_on_commit_callbacks(execute=True):
        delivery = delivery_service.webhook_test(webhook=hook, user=admin)
    page = f"{LIST}{hook.pk}/"
    pages = [
        LIST,
        page,
        f"{page}test/",
        f"{page}rotate/",
        f"{page}deliveries/{delivery.pk}/redeliver/",
        f"{page}deliveries/99999999999999999999/redeliver/",
        f"{LIST}99999999999999999999/",
        f"{page}delete/",
    ]
    forms = [
        *FORMS,
        {"url": "https://e.com/\x00", "events": ["ping", "nope"], "projects": "a b,,c"},
        {"url": "http://[::1", "events": "ping", "projects": "web " * 200, "active": "x"},
        {"url": "x" * 3000, "events": [""], "description": "d" * 1000},
    ]
    client = browse(admin)
    for url in pages:
        for query in QUERIES:
            response = client.get(url + query)
            assert response.status_code < 500, (url + query, response.status_code)
        for form in forms:
            response = client.post(url, form)
            assert response.status_code < 500, (url, form, response.status_code)
