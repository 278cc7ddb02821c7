from __future__ import annotations

import ipaddress
from datetime import UTC, datetime

import pytest

from agentdocs.core.errors import InvalidInput
from agentdocs.core.webhooks import (
    address_refusal,
    payload,
    retry_delay,
    validate_events,
    validate_url,
)


@pytest.mark.parametrize(
    ("address", "refusal"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.8.9.10", "a loopback address"),
        ("::1", "a loopback address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("192.168.1.1", "a private address"),
        ("100.64.0.1", "a private address"),
        ("169.254.169.254", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("100.100.100.200", "a cloud metadata address"),
        ("fd12:3456::1", "a unique-local address"),
        ("224.0.0.1", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("240.0.0.1", "a reserved address"),
        ("255.255.255.255", "a reserved address"),
        ("64:ff9b::7f00:1", "a loopback address"),  # NAT64 of 127.0.0.1
        ("2002:7f00:1::", "a loopback address"),  # 6to4 of 127.0.0.1
        ("192.0.2.1", "a private address"),  # documentation, "private" to ipaddress
    ],
)
def test_addresses_deliveries_may_not_reach(address, refusal):
    assert address_refusal(ipaddress.ip_address(address)) == refusal


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700::1111"])
def test_public_addresses_are_reached(address):
    assert address_refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "http://[::1]/",
        "http://0x7f.1/",
        "http://2130706433/",
        "http://localhost/",
        "http://api.localhost./",
        "http://169.254.169.254/latest/meta-data/",
    ],
)
def test_a_url_naming_a_refused_address_is_refused_unless_allowed(url):
    with pytest.raises(InvalidInput) as refused:
        validate_url(url, allow_private=False)
    assert refused.value.field == "url"
    assert validate_url(url, allow_private=True) == url


@pytest.mark.parametrize(
    "url",
    [
        "",
        "example.com/hook",
        "ftp://example.com/",
        "javascript:alert(1)",
        "https://user:secret@example.com/",
        "https://token@example.com/",
        "https://example.com:0/",
        "https://example.com:70000/",
        "https:///path",
        "https://exa mple.com/",
        "https://exa\tmple.com/",
        "https://example.com/#fragment",
        "https://example.com/" + "a" * 2000,
        None,
        ["https://example.com/"],
    ],
)
def test_bad_urls_are_refused_naming_the_field(url):
    with pytest.raises(InvalidInput) as refused:
        validate_url(url, allow_private=True)
    assert refused.value.field == "url"


def test_a_good_url_is_kept_as_written():
    assert validate_url(" https://hooks.example.com:8443/a?b=c ", allow_private=False) == (
        "https://hooks.example.com:8443/a?b=c"
    )


def test_events_are_deduplicated_in_their_own_order_and_unknown_ones_refused():
    assert validate_events(["document.updated", "ping", "document.created", "ping"]) == [
        "document.created",
        "document.updated",
        "ping",
    ]
    for bad in ([], "document.updated", ["document.exploded"], [None], None):
        with pytest.raises(InvalidInput) as refused:
            validate_events(bad)
        assert refused.value.field == "events"


def test_the_retry_schedule_is_read_from_its_start_and_ends():
    schedule = (10.0, 60.0, 300.0)
    assert [retry_delay(schedule, left) for left in (3, 2, 1, 0)] == [10.0, 60.0, 300.0, None]
    assert retry_delay(schedule, 7) == 10.0  # more retries than the schedule (changed since)
    assert retry_delay((), 3) is None


def test_the_payload_has_the_documented_shape():
    made = payload(
        event_id="evt_1",
        type="document.updated",
        created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        tenant="acme",
        project=None,
        data={"path": "agent.md"},
    )
    assert made == {
        "id": "evt_1",
        "type": "document.updated",
        "created_at": "2026-01-02T03:04:05Z",
        "tenant": "acme",
        "project": None,
        "data": {"path": "agent.md"},
    }
