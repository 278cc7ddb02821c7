"""The sign-in throttle in Chromium: wrong passwords typed into the real form until
sign-in is paused; the page says so, and the right password is then refused too."""

from __future__ import annotations

from django.conf import settings


def submit(page, password: str) -> int:
    """Types ``password`` into the sign-in form, sends it and returns the answer's status."""
    page.get_by_label("Password").fill(password)
    with page.expect_response(lambda response: response.request.method == "POST") as answer:
        page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()
    return answer.value.status


def test_wrong_passwords_pause_sign_in_and_the_right_one_is_then_refused(
    open_context, writer, tenant
):
    page = open_context().new_page()
    page.goto("/login/")
    page.get_by_label("Username").fill("bob")

    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert submit(page, "not-bobs-password") == 200
        assert "do not match" in page.get_by_role("alert").inner_text()
    assert submit(page, "not-bobs-password") == 429

    alert = page.get_by_role("alert")
    assert "Too many failed sign-ins for this account" in alert.inner_text()
    assert "Sign-in is paused for 15 minutes; try again at" in alert.inner_text()
    # The paused page keeps its form, the username filled in; the right password is
    # refused all the same.
    assert page.get_by_label("Username").input_value() == "bob"
    assert submit(page, "bob-password") == 429
    assert "Sign-in is paused" in page.get_by_role("alert").inner_text()

    page.goto("/")
    assert "/login/?next=/" in page.url
