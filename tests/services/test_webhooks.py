"""Webhook deliveries in-process (Celery eager, as with no broker): each committed event
waits in the outbox until a sweep sends it, as `manage.py webhook_sweep` does, to a real
HTTP receiver on 127.0.0.1, signed per Standard Webhooks; retries too, once due."""

from __future__ import annotations

import io
import json
import socket
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from standardwebhooks import Webhook as Verifier

from agentdocs.links import event_data
from agentdocs.models import Delivery, DeliveryAttempt, DeliveryState, Event, Webhook
from agentdocs.services import deliveries as delivery_service
from agentdocs.services import events as event_service
from agentdocs.services import webhooks as webhook_service

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_retries(settings, celery_eager):
    settings.AGENTDOCS_WEBHOOK_RETRY_SCHEDULE = (0.1, 0.1, 0.1)
    settings.AGENTDOCS_WEBHOOK_TIMEOUT_SECONDS = 2.0


def _webhook(tenant, admin, url, **extra):
    options = {"events": ["document.updated"], "projects": None, **extra}
    return webhook_service.webhook_create(tenant=tenant, url=url, user=admin, **options)


def _emit(tenant, project, admin, type="document.updated") -> Event:
    return event_service.emit(
        type=type,
        tenant=tenant,
        project=project,
        actor=admin,
        target="agent.md",
        reason="a test",
        version=2,
        data={"path": "agent.md", "version": 2},
    )


def _sweep_until_closed(capture, delivery_id: int, *, rounds: int = 10) -> Delivery:
    for _ in range(rounds):
        delivery = Delivery.objects.get(pk=delivery_id)
        if delivery.state not in (DeliveryState.PENDING, DeliveryState.RETRYING):
            return delivery
        time.sleep(0.12)
        with capture(execute=True):
            call_command("webhook_sweep", "--older-than", "0", stdout=io.StringIO())
    return Delivery.objects.get(pk=delivery_id)


def test_a_committed_event_is_delivered_signed_with_the_event_id(
    tenant, project, admin, webhook_receiver, django_capture_on_commit_callbacks, sweep_webhooks
):
    new = _webhook(tenant, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        event = _emit(tenant, project, admin)
    sweep_webhooks()

    assert len(webhook_receiver.received) == 1
    body, headers = webhook_receiver.received[0]
    payload = Verifier(new.secret).verify(body, headers)
    assert payload == {
        "id": event.id,
        "type": "document.updated",
        "created_at": payload["created_at"],
        "tenant": "acme",
        "project": "web",
        # The stored ids, with the links the URL conf gives them (`agentdocs.links`).
        "data": {
            "path": "agent.md",
            "version": 2,
            "links": {
                "page": "/t/acme/web/doc/agent.md",
                "api": "/api/v1/tenants/acme/projects/web/documents/agent.md",
            },
        },
    }
    assert payload["created_at"].endswith("Z")
    assert headers["Webhook-Id"] == event.id
    assert headers["Content-Type"] == "application/json"
    assert headers["User-Agent"] == "agentdocs-webhooks"
    delivery = Delivery.objects.get(webhook=new.webhook)
    assert (delivery.state, delivery.attempts, delivery.status_code) == ("succeeded", 1, 200)


def test_a_wrong_secret_does_not_verify(
    tenant, project, admin, webhook_receiver, django_capture_on_commit_callbacks, sweep_webhooks
):
    _webhook(tenant, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    sweep_webhooks()
    body, headers = webhook_receiver.received[0]
    from standardwebhooks.webhooks import WebhookVerificationError

    with pytest.raises(WebhookVerificationError):
        Verifier(webhook_service.new_secret()).verify(body, headers)


def test_a_receiver_failing_twice_gets_one_success_and_three_logged_attempts(
    tenant, project, admin, webhook_receiver, django_capture_on_commit_callbacks, sweep_webhooks
):
    webhook_receiver.answer((500, "down"), (503, "still down"))
    new = _webhook(tenant, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        event = _emit(tenant, project, admin)
    sweep_webhooks()

    first = Delivery.objects.get(webhook=new.webhook)
    assert first.state == "retrying" and first.attempts == 1 and first.next_retry_at is not None
    delivery = _sweep_until_closed(django_capture_on_commit_callbacks, first.pk)

    assert delivery.state == "succeeded"
    assert Delivery.objects.filter(webhook=new.webhook).count() == 1
    attempts = list(DeliveryAttempt.objects.filter(delivery=delivery).order_by("number"))
    assert [(a.number, a.status_code, a.succeeded) for a in attempts] == [
        (1, 500, False),
        (2, 503, False),
        (3, 200, True),
    ]
    assert attempts[0].error == "HTTP 500" and attempts[0].response_body == "down"
    # The same webhook-id on every attempt: receivers deduplicate on it.
    assert [h["Webhook-Id"] for _, h in webhook_receiver.received] == [event.id] * 3
    for body, headers in webhook_receiver.received:
        Verifier(new.secret).verify(body, headers)
    webhook = Webhook.objects.get(pk=new.webhook.pk)
    assert webhook.active and webhook.failing_since is None


def test_running_the_task_again_for_a_delivered_event_sends_nothing(
    tenant, project, admin, webhook_receiver, django_capture_on_commit_callbacks, sweep_webhooks
):
    new = _webhook(tenant, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        event = _emit(tenant, project, admin)
        # The signal sent twice for one event makes no second delivery.
        event_service.event_committed.send(sender=Event, event=event)
    sweep_webhooks()
    delivery = Delivery.objects.get(webhook=new.webhook)

    assert delivery_service.delivery_attempt(delivery_id=delivery.pk) is None
    assert delivery_service.delivery_sweep(older_than=timedelta(0)) == []
    assert len(webhook_receiver.received) == 1
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1


def test_only_matching_webhooks_of_the_events_tenant_get_it(
    tenant,
    project,
    vance,
    admin,
    other_tenant,
    outsider,
    webhook_receiver,
    django_capture_on_commit_callbacks,
):
    hears_web = _webhook(tenant, admin, webhook_receiver.url, projects=["web"]).webhook
    hears_vance = _webhook(tenant, admin, webhook_receiver.url, projects=["_vance"]).webhook
    hears_settings = _webhook(tenant, admin, webhook_receiver.url, events=["setting.changed"])
    turned_off = _webhook(tenant, admin, webhook_receiver.url).webhook
    webhook_service.webhook_update(webhook=turned_off, user=admin, active=False)
    foreign = _webhook(other_tenant, outsider, webhook_receiver.url).webhook

    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
        _emit(tenant, None, admin, type="setting.changed")

    delivered = set(Delivery.objects.values_list("webhook_id", "event_type"))
    assert delivered == {
        (hears_web.pk, "document.updated"),
        (hears_settings.webhook.pk, "setting.changed"),
    }
    assert not Delivery.objects.filter(webhook__in=[hears_vance, turned_off, foreign]).exists()


def test_a_rolled_back_change_delivers_nothing(tenant, project, admin, webhook_receiver):
    from django.db import transaction

    _webhook(tenant, admin, webhook_receiver.url)
    with pytest.raises(RuntimeError), transaction.atomic():
        _emit(tenant, project, admin)
        raise RuntimeError("the change failed")
    assert not Delivery.objects.exists()
    assert webhook_receiver.received == []


def test_a_private_address_is_refused_when_not_allowed_and_reached_when_allowed(
    tenant,
    project,
    admin,
    webhook_receiver,
    settings,
    django_capture_on_commit_callbacks,
    sweep_webhooks,
):
    # `localhost` is a name: it is refused by what it resolves to, when sending.
    url = webhook_receiver.url.replace("127.0.0.1", "localhost")
    new = _webhook(tenant, admin, url)
    settings.AGENTDOCS_WEBHOOK_ALLOW_PRIVATE = False
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    sweep_webhooks()

    assert webhook_receiver.received == []
    attempt = DeliveryAttempt.objects.get()
    assert attempt.status_code is None and not attempt.succeeded
    assert attempt.error in (
        "refused: 127.0.0.1 is a loopback address",
        "refused: ::1 is a loopback address",
    )

    settings.AGENTDOCS_WEBHOOK_ALLOW_PRIVATE = True
    delivery = _sweep_until_closed(django_capture_on_commit_callbacks, attempt.delivery_id)
    assert delivery.state == "succeeded"
    assert len(webhook_receiver.received) == 1
    assert new.webhook.deliveries.count() == 1


def test_a_redirect_is_not_followed_and_counts_as_a_failure(
    tenant, project, admin, webhook_receiver, django_capture_on_commit_callbacks, sweep_webhooks
):
    webhook_receiver.answer((302, "elsewhere"))
    _webhook(tenant, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    sweep_webhooks()
    attempt = DeliveryAttempt.objects.get()
    assert attempt.status_code == 302 and not attempt.succeeded
    assert attempt.error.startswith("redirect (HTTP 302")
    assert len(webhook_receiver.received) == 1


def test_the_response_body_kept_is_capped(
    tenant,
    project,
    admin,
    webhook_receiver,
    settings,
    django_capture_on_commit_callbacks,
    sweep_webhooks,
):
    settings.AGENTDOCS_WEBHOOK_RESPONSE_BODY_BYTES = 100
    webhook_receiver.answer((200, "x" * 100_000))
    _webhook(tenant, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    sweep_webhooks()
    attempt = DeliveryAttempt.objects.get()
    assert attempt.succeeded and attempt.response_body == "x" * 100


def test_a_slow_receiver_times_out(
    tenant,
    project,
    admin,
    webhook_receiver,
    settings,
    django_capture_on_commit_callbacks,
    sweep_webhooks,
):
    settings.AGENTDOCS_WEBHOOK_TIMEOUT_SECONDS = 0.3
    webhook_receiver.answer((None, "late"))
    _webhook(tenant, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    started = time.monotonic()
    sweep_webhooks()
    assert time.monotonic() - started < 3
    webhook_receiver.release()
    attempt = DeliveryAttempt.objects.get()
    assert attempt.error == "timed out after 0.3 s" and attempt.status_code is None


def test_a_refused_connection_is_logged_as_such_not_as_a_timeout(
    tenant, project, admin, django_capture_on_commit_callbacks, sweep_webhooks
):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _webhook(tenant, admin, f"http://127.0.0.1:{port}/hook")
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    sweep_webhooks()
    attempt = DeliveryAttempt.objects.get()
    assert attempt.error.startswith("connection failed"), attempt.error
    assert "refused" in attempt.error.lower()


def test_an_endpoint_whose_last_retry_fails_is_disabled(
    tenant,
    project,
    admin,
    webhook_receiver,
    settings,
    django_capture_on_commit_callbacks,
    sweep_webhooks,
):
    settings.AGENTDOCS_WEBHOOK_RETRY_SCHEDULE = (0.1,)
    webhook_receiver.default = (500, "broken")
    new = _webhook(tenant, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    sweep_webhooks()
    delivery = _sweep_until_closed(django_capture_on_commit_callbacks, Delivery.objects.get().pk)

    assert delivery.state == "failed" and delivery.attempts == 2
    webhook = Webhook.objects.get(pk=new.webhook.pk)
    assert not webhook.active and webhook.disabled_at is not None
    assert "last retry" in webhook.disabled_reason
    # A disabled webhook is sent nothing more.
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    sweep_webhooks()
    assert Delivery.objects.count() == 1
    # Turning it on again forgets the failures.
    webhook_service.webhook_update(webhook=webhook, user=admin, active=True)
    webhook.refresh_from_db()
    assert webhook.active and webhook.failing_since is None and webhook.disabled_reason == ""


def test_an_endpoint_failing_for_a_day_is_disabled(
    tenant, project, admin, webhook_receiver, django_capture_on_commit_callbacks, sweep_webhooks
):
    webhook_receiver.default = (500, "broken")
    new = _webhook(tenant, admin, webhook_receiver.url)
    Webhook.objects.filter(pk=new.webhook.pk).update(
        failing_since=timezone.now() - timedelta(hours=25)
    )
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    sweep_webhooks()
    webhook = Webhook.objects.get(pk=new.webhook.pk)
    assert not webhook.active
    assert webhook.disabled_reason.startswith("Every delivery has failed since")
    assert Event.objects.filter(type="webhook.updated", data__active=False).exists()
    # Turned off by this failure: the delivery is closed, not retried into a dead end.
    delivery = Delivery.objects.get()
    assert delivery.state == "failed" and delivery.next_retry_at is None


def test_webhook_events_name_the_host_not_a_url_that_may_hold_a_secret(tenant, admin):
    url = "https://hooks.chat.example/services/T000/B000/XXXXSECRET?token=abc"
    new = _webhook(tenant, admin, url)
    webhook_service.webhook_update(webhook=new.webhook, user=admin, rotate_secret=True)
    webhook_service.webhook_delete(webhook=new.webhook, user=admin)
    events = list(Event.objects.filter(kind="webhook").order_by("created_at"))
    assert [e.type for e in events] == ["webhook.created", "webhook.updated", "webhook.deleted"]
    for event in events:
        assert event.target == "https://hooks.chat.example/…"
        assert "SECRET" not in str(event.data) and "whsec_" not in str(event.data)
    assert events[1].data["changed"] == ["secret"] and events[0].actor == admin


def test_a_ping_and_a_redelivery_resend_with_the_same_id(
    tenant, project, admin, webhook_receiver, django_capture_on_commit_callbacks, sweep_webhooks
):
    new = _webhook(tenant, admin, webhook_receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        ping = delivery_service.webhook_test(webhook=new.webhook, user=admin)
    sweep_webhooks()
    body, headers = webhook_receiver.received[0]
    payload = Verifier(new.secret).verify(body, headers)
    assert payload["type"] == "ping" and payload["id"] == ping.event_id
    assert payload["data"]["webhook"] == new.webhook.pk

    with django_capture_on_commit_callbacks(execute=True):
        delivery_service.delivery_redeliver(delivery=ping, user=admin)
    sweep_webhooks()
    assert len(webhook_receiver.received) == 2
    assert webhook_receiver.received[1][1]["Webhook-Id"] == ping.event_id
    ping.refresh_from_db()
    assert (ping.state, ping.attempts) == ("succeeded", 2)
    assert json.loads(webhook_receiver.received[1][0])["id"] == ping.event_id


def test_a_rotated_secret_signs_the_next_delivery(
    tenant, project, admin, webhook_receiver, django_capture_on_commit_callbacks, sweep_webhooks
):
    new = _webhook(tenant, admin, webhook_receiver.url)
    rotated = webhook_service.webhook_update(webhook=new.webhook, user=admin, rotate_secret=True)
    assert rotated.secret and rotated.secret != new.secret
    with django_capture_on_commit_callbacks(execute=True):
        _emit(tenant, project, admin)
    sweep_webhooks()
    body, headers = webhook_receiver.received[0]
    Verifier(rotated.secret).verify(body, headers)


def _fake_dns(monkeypatch, answers: dict[str, list[str]], calls: list[str]) -> None:
    """Resolve the names in ``answers`` (once each: a second lookup fails), others as usual."""
    import socket

    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            return real(host, port, *args, **kwargs)
        calls.append(host)
        if calls.count(host) > 1:
            raise socket.gaierror(socket.EAI_NONAME, "looked up twice")
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answers[host]
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_every_resolved_address_is_checked(monkeypatch):
    from agentdocs.services import webhook_sender

    _fake_dns(monkeypatch, {"mixed.example": ["93.184.215.14", "10.0.0.7"]}, [])
    result = webhook_sender.send(
        url="http://mixed.example/hook",
        body=b"{}",
        headers={},
        timeout=1,
        body_cap=100,
        allow_private=False,
    )
    assert result.status_code is None and result.error == "refused: 10.0.0.7 is a private address"


def test_the_request_goes_to_the_checked_address_with_the_urls_host(monkeypatch, webhook_receiver):
    """One lookup, then a connection to the address it gave: a name that resolves
    differently a moment later (DNS rebinding) cannot redirect the request."""
    from agentdocs.services import webhook_sender

    calls: list[str] = []
    _fake_dns(monkeypatch, {"hooks.example.test": ["127.0.0.1"]}, calls)
    url = webhook_receiver.url.replace("127.0.0.1", "hooks.example.test")
    result = webhook_sender.send(
        url=url, body=b"{}", headers={}, timeout=2, body_cap=100, allow_private=True
    )
    assert result.succeeded, result.error
    assert calls == ["hooks.example.test"]
    port = url.split(":")[2].split("/")[0]
    assert webhook_receiver.received[0][1]["Host"] == f"hooks.example.test:{port}"


@pytest.fixture
def tls_receiver(tmp_path):
    """An HTTPS receiver on 127.0.0.1 whose certificate names hooks.example.test only."""
    import datetime as dt
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    from pytest_httpserver import HTTPServer

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hooks.example.test")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("hooks.example.test")]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    server.expect_request("/hook", method="POST").respond_with_data("secure")
    server.start()
    try:
        yield server, str(cert_path)
    finally:
        server.clear()
        server.stop()


def test_https_checks_the_urls_host_on_the_certificate_while_connecting_to_its_address(
    monkeypatch, tls_receiver
):
    from agentdocs.services import webhook_sender

    server, ca = tls_receiver
    _fake_dns(monkeypatch, {"hooks.example.test": ["127.0.0.1"]}, [])
    url = f"https://hooks.example.test:{server.port}/hook"
    options = {"body": b"{}", "headers": {}, "timeout": 2, "body_cap": 100, "allow_private": True}
    trusted = webhook_sender.send(url=url, ca_certs=ca, **options)
    assert trusted.succeeded and trusted.response_body == "secure", trusted.error
    # The same server under a name its certificate does not carry, or not trusted at all.
    wrong_name = webhook_sender.send(
        url=f"https://127.0.0.1:{server.port}/hook", ca_certs=ca, **options
    )
    assert wrong_name.status_code is None and wrong_name.error.startswith("TLS failed")
    _fake_dns(monkeypatch, {"hooks.example.test": ["127.0.0.1"]}, [])
    untrusted = webhook_sender.send(url=url, **options)
    assert untrusted.status_code is None and "certificate verify failed" in untrusted.error


@pytest.mark.parametrize("count", [2, 20])
def test_an_events_deliveries_are_made_in_the_same_queries_whatever_the_webhooks(
    tenant, project, admin, webhook_receiver, django_assert_num_queries, count
):
    for _ in range(count):
        _webhook(tenant, admin, webhook_receiver.url)
    event = _emit(tenant, project, admin)  # its signal not sent: the test never commits
    event = Event.objects.select_related("tenant", "project").get(pk=event.pk)
    # webhooks, those already made, savepoint, insert, release
    with django_assert_num_queries(5):
        ids = delivery_service.deliveries_create(event=event, data=event_data(event))
    assert len(ids) == count and webhook_receiver.received == []
    assert delivery_service.deliveries_create(event=event, data=event_data(event)) == []
    assert Delivery.objects.filter(event_id=event.id).count() == count
