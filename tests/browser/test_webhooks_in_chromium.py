"""The webhook pages in Chromium: a tenant admin adds a webhook, copies its secret from
the one page that shows it, queues a test ping to a real receiver and reads the log
once the sweeper (here, a sweep in the test) has sent it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from standardwebhooks import Webhook as Verifier

from agentdocs.models import Webhook
from agentdocs.services import deliveries as delivery_service


@pytest.fixture(autouse=True)
def _in_process(celery_eager):
    """No broker: the live server sends nothing; a sweep here sends what it queued."""


def test_an_admin_adds_a_webhook_tests_it_and_reads_the_log(
    signed_in, screenshot, admin, tenant, project, webhook_receiver
):
    page = signed_in(admin)
    page.goto("/t/acme/")
    page.get_by_role("link", name="Webhooks").click()
    page.get_by_label("Payload URL").fill(webhook_receiver.url)
    page.get_by_label("setting.changed").check()
    page.get_by_label("Description").fill("Chat notifications")
    page.get_by_role("button", name="Add webhook").click()

    secret = page.locator("#new-webhook-secret").inner_text()
    assert secret == Webhook.objects.get().secret
    expect(page.get_by_text("It is shown this once")).to_be_visible()
    screenshot(page, "webhook-created")

    page.get_by_role("button", name="Send a test ping").click()
    expect(page.get_by_text("Queued a ping")).to_be_visible()
    expect(page.locator("#new-webhook-secret")).to_have_count(0)
    expect(page.locator(".badge", has_text="pending")).to_be_visible()
    assert webhook_receiver.received == []  # the page answered without waiting on it

    assert len(delivery_service.delivery_sweep()) == 1
    page.reload()
    expect(page.locator(".badge", has_text="succeeded")).to_be_visible()
    body, headers = webhook_receiver.received[0]
    assert Verifier(secret).verify(body, headers)["type"] == "ping"

    page.get_by_role("button", name="Redeliver").click()
    expect(page.get_by_text("to be sent again")).to_be_visible()
    assert len(delivery_service.delivery_sweep()) == 1
    page.reload()
    expect(page.get_by_text(re.compile(r"#2 200"))).to_be_visible()
    screenshot(page, "webhook")
    page.get_by_role("link", name="Webhooks").click()
    expect(page.get_by_text("Chat notifications")).to_be_visible()
    screenshot(page, "webhooks")
