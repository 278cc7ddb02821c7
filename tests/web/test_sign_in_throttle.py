"""Throttled sign-in (issue 23, finding 2): failed sign-ins pause signing in, per account
and per address, on the sign-in page and the admin's; a success clears the count."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from agentdocs.web.sign_in import pause_end

pytestmark = pytest.mark.django_db

HOME = "203.0.113.7"
ELSEWHERE = "198.51.100.20"


def sign_in(client: Client, username: str, password: str, *, address: str = HOME, **extra):
    path = extra.pop("path", "/login/")
    return client.post(
        path, {"username": username, "password": password}, REMOTE_ADDR=address, **extra
    )


def fail(client: Client, username: str, times: int, *, address: str = HOME, **extra) -> list:
    return [sign_in(client, username, "wrong", address=address, **extra) for _ in range(times)]


def fail_from_many_addresses(client: Client, username: str, times: int, **extra) -> list:
    """Failures from a new address each time: only the account's count reaches the limit."""
    return [
        sign_in(client, username, "wrong", address=f"192.0.2.{attempt + 1}", **extra)
        for attempt in range(times)
    ]


def expected_pause(reason: str) -> str:
    """The sentence of a pause that ends 15 minutes after the oldest failure recorded
    (each test here records only failures that count towards its pause)."""
    oldest = AccessAttempt.objects.earliest("attempt_time").attempt_time
    # The minute after the pause ends, when trying again works.
    again = oldest.replace(second=0, microsecond=0) + timedelta(minutes=16)
    # A pause that ends on another day (a test run just before midnight) names its date.
    at = f"{again:%H:%M}" if again.date() == timezone.now().date() else f"{again:%Y-%m-%d %H:%M}"
    return (
        f"Too many failed sign-ins {reason}. Sign-in is paused for 15 minutes; "
        f"try again at {at} UTC."
    )


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_the_defaults_are_ten_failures_in_fifteen_minutes():
    assert settings.AXES_FAILURE_LIMIT == 10
    assert settings.AXES_COOLOFF_TIME.total_seconds() == 15 * 60


def test_ten_failures_pause_the_account_even_for_the_right_password(client, writer, tenant):
    before = fail_from_many_addresses(client, "bob", settings.AXES_FAILURE_LIMIT - 1)
    assert {response.status_code for response in before} == {200}
    assert all(b"do not match" in response.content for response in before)

    tenth = sign_in(client, "bob", "wrong", address=ELSEWHERE)
    assert tenth.status_code == 429
    # A new address does not help: the account's count is over all of them.
    right = sign_in(client, "bob", "bob-password", address=HOME)

    assert right.status_code == 429
    text = right.content.decode()
    assert expected_pause("for this account") in text
    assert "do not match" not in text
    # The app's own sign-in page: its layout and a form to try again with.
    assert "Sign in to agentdocs" in text and 'name="csrfmiddlewaretoken"' in text
    assert 15 * 60 - 30 < int(right["Retry-After"]) <= 15 * 60
    assert not signed_in(client)
    assert client.get("/").status_code == 302


def test_an_unknown_username_is_paused_like_a_real_one(client, writer, tenant):
    """The pause tells no one whether an account exists."""
    known = fail_from_many_addresses(client, "bob", settings.AXES_FAILURE_LIMIT)[-1]
    unknown = fail_from_many_addresses(client, "nobody", settings.AXES_FAILURE_LIMIT)[-1]

    assert known.status_code == unknown.status_code == 429
    assert "for this account." in known.content.decode()
    assert "for this account." in unknown.content.decode()


def test_failures_from_one_address_pause_the_account_and_the_address(client, writer, tenant):
    fail(client, "bob", settings.AXES_FAILURE_LIMIT, address=HOME)

    here = sign_in(client, "bob", "bob-password", address=HOME)
    elsewhere = sign_in(Client(), "bob", "bob-password", address=ELSEWHERE)

    assert here.status_code == elsewhere.status_code == 429
    both = expected_pause("for this account and from your network address")
    assert both in here.content.decode()
    assert expected_pause("for this account") in elsewhere.content.decode()


def test_an_attempt_while_paused_is_not_counted_and_does_not_move_the_end(client, writer, tenant):
    fail(client, "bob", settings.AXES_FAILURE_LIMIT)
    counted = AccessAttempt.objects.get()

    fail(client, "bob", 3)
    sign_in(client, "bob", "bob-password")

    again = AccessAttempt.objects.get()
    assert again.failures_since_start == settings.AXES_FAILURE_LIMIT
    assert again.attempt_time == counted.attempt_time


def test_a_success_before_the_limit_clears_the_count(client, writer, tenant):
    fail(client, "bob", settings.AXES_FAILURE_LIMIT - 1)
    assert sign_in(client, "bob", "bob-password").status_code == 302
    client.post("/logout/")
    assert not AccessAttempt.objects.exists()

    fail(client, "bob", settings.AXES_FAILURE_LIMIT - 1)
    response = sign_in(client, "bob", "bob-password")

    assert response.status_code == 302 and response["Location"] == "/"
    assert signed_in(client)


def test_one_address_trying_many_accounts_is_paused(client, admin, writer, reader, outsider):
    usernames = ["alice", "bob", "carol", "mallory", "nobody"]
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, usernames[attempt % len(usernames)], "wrong")

    # carol's own password, from the spraying address: paused, for the address.
    right = sign_in(client, "carol", "carol-password")

    assert right.status_code == 429
    assert expected_pause("from your network address") in right.content.decode()
    assert not signed_in(client)
    # carol herself, from her own address, is not paused: her account had two failures.
    elsewhere = Client()
    assert sign_in(elsewhere, "carol", "carol-password", address=ELSEWHERE).status_code == 302


def test_signing_in_to_an_own_account_does_not_clear_the_addresss_count(
    client, admin, writer, reader, outsider
):
    """mallory, who has an account, tries others' passwords between her own sign-ins."""
    fail(client, "carol", 5)
    fail(client, "bob", settings.AXES_FAILURE_LIMIT - 6)
    assert sign_in(Client(), "mallory", "mallory-password").status_code == 302

    tenth = sign_in(client, "alice", "wrong")

    assert tenth.status_code == 429
    assert expected_pause("from your network address") in tenth.content.decode()


def test_the_admin_sign_in_is_paused_the_same_way(client):
    get_user_model().objects.create_superuser(username="root", password="root-password")
    admin_login = "/admin/login/?next=/admin/"
    before = fail_from_many_addresses(
        client, "root", settings.AXES_FAILURE_LIMIT - 1, path=admin_login
    )
    assert {response.status_code for response in before} == {200}

    tenth = sign_in(client, "root", "wrong", path=admin_login)
    right = sign_in(client, "root", "root-password", path=admin_login)

    for response in (tenth, right):
        assert response.status_code == 429
        assert expected_pause("for this account") in response.content.decode()
    assert 'name="next" value="/admin/"' in right.content.decode()
    assert not signed_in(client)
    assert client.get("/admin/").status_code == 302
    # One count for both doors: the app's sign-in page is paused for root too.
    assert sign_in(client, "root", "root-password").status_code == 429


def test_failures_on_the_sign_in_page_pause_the_admin_sign_in(client):
    get_user_model().objects.create_superuser(username="root", password="root-password")
    fail(client, "root", settings.AXES_FAILURE_LIMIT)

    right = sign_in(client, "root", "root-password", path="/admin/login/")

    assert right.status_code == 429 and not signed_in(client)


def test_after_the_cool_off_sign_in_works_again(client, writer, tenant):
    fail(client, "bob", settings.AXES_FAILURE_LIMIT)
    assert sign_in(client, "bob", "bob-password").status_code == 429
    # Not history-tracked (axes' own table): moved back as if 15 minutes had passed.
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=15, seconds=1))

    response = sign_in(client, "bob", "bob-password")

    assert response.status_code == 302 and signed_in(client)


def test_a_shorter_cool_off_from_settings_says_so(client, writer, tenant, settings):
    settings.AXES_COOLOFF_TIME = timedelta(minutes=1)
    fail(client, "bob", settings.AXES_FAILURE_LIMIT)

    right = sign_in(client, "bob", "bob-password")

    assert "Sign-in is paused for 1 minute;" in right.content.decode()
    assert 0 < int(right["Retry-After"]) <= 60


def test_axes_reset_username_unpauses_an_account(client, writer, tenant):
    fail(client, "bob", settings.AXES_FAILURE_LIMIT)

    call_command("axes_reset_username", "bob")

    assert sign_in(client, "bob", "bob-password").status_code == 302


def test_x_forwarded_for_is_not_believed_without_trusted_proxies(client, admin, writer):
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, f"nobody{attempt}", "wrong", HTTP_X_FORWARDED_FOR=f"10.0.0.{attempt}")

    right = sign_in(client, "bob", "bob-password", HTTP_X_FORWARDED_FOR="10.9.9.9")

    assert right.status_code == 429
    assert expected_pause("from your network address") in right.content.decode()


def test_behind_a_trusted_proxy_the_address_it_saw_counts(client, writer, settings):
    settings.AGENTDOCS_TRUSTED_PROXIES = 1
    proxy = "10.0.0.1"
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        # The client writes what it likes on the left; the proxy appends what it saw.
        forwarded = f"192.0.2.{attempt}, {HOME}"
        sign_in(client, f"nobody{attempt}", "wrong", address=proxy, HTTP_X_FORWARDED_FOR=forwarded)

    paused = sign_in(
        client, "bob", "bob-password", address=proxy, HTTP_X_FORWARDED_FOR=f"192.0.2.99, {HOME}"
    )
    other = sign_in(Client(), "bob", "bob-password", address=proxy, HTTP_X_FORWARDED_FOR=ELSEWHERE)

    assert paused.status_code == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {HOME}
    assert other.status_code == 302


def test_a_request_without_an_address_is_counted_without_one(client, writer, settings):
    settings.AGENTDOCS_TRUSTED_PROXIES = 1
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, f"nobody{attempt}", "wrong", address="", HTTP_X_FORWARDED_FOR="junk")

    paused = sign_in(client, "bob", "bob-password", address="")

    assert paused.status_code == 429
    assert expected_pause("from your network address") in paused.content.decode()
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {None}


def test_a_pause_ends_when_the_failure_that_reached_the_limit_expires():
    start = timezone.now()
    cool_off = timedelta(minutes=15)

    assert pause_end([(start, 9)], limit=10, cool_off=cool_off) is None
    assert pause_end([(start, 10)], limit=10, cool_off=cool_off) == start + cool_off
    # Newest first: the later row alone reaches the limit, so the older one does not matter.
    later = start + timedelta(minutes=5)
    assert pause_end([(start, 3), (later, 10)], limit=10, cool_off=cool_off) == later + cool_off
    # Together they reach it: the pause lasts until the older row expires.
    assert pause_end([(start, 6), (later, 4)], limit=10, cool_off=cool_off) == start + cool_off
