"""Real Chromium through Playwright for Python, against pytest-django's live server.

Debian's Chromium is used (no browser download works here). Without it the tests
are skipped with the reason; CI sets AGENTDOCS_REQUIRE_SERVICES=1, which makes a
missing browser a failure instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import need_service

CHROMIUM = os.environ.get("AGENTDOCS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
TIMEOUT_MS = 15_000


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="package", autouse=True)
def allow_orm_beside_playwright():
    """Playwright's sync API runs an event loop in the main thread, so Django would take
    the ORM calls the tests make between page actions for async code. They are plain
    synchronous code: allow them, for these tests only (a process-wide setting would
    leak into the subprocesses other tests start)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="package")
def chromium(allow_orm_beside_playwright):
    need_service("Chromium", Path(CHROMIUM).exists(), f"no browser at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:  # pragma: no cover - playwright is a dev dependency
        need_service("Playwright", False, str(error))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_context(chromium, live_server):
    """``open_context(viewport=...)`` is a fresh browser profile aimed at the live server."""
    contexts = []

    def make(**options):
        options.setdefault("viewport", {"width": 1280, "height": 860})
        context = chromium.new_context(base_url=live_server.url, **options)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def signed_in(open_context):
    """``signed_in(user)`` is a page in its own context, signed in through the sign-in form."""

    def make(user, **options):
        page = open_context(**options).new_page()
        page.goto("/login/")
        page.get_by_label("Username").fill(user.username)
        page.get_by_label("Password").fill(f"{user.username}-password")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/")
        return page

    return make


@pytest.fixture
def screenshot(tmp_path):
    """``screenshot(page, name)`` takes the page's picture. With UPDATE_SCREENSHOTS=1 it
    replaces docs/screenshots/<name>.png, the README's pictures; otherwise it goes to a
    temporary folder, so an ordinary test run leaves the tracked files alone."""
    folder = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)

    def save(page, name: str, *, full_page: bool = True) -> None:
        # From the top, so the sticky header sits where a reader expects it.
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(folder / f"{name}.png"), full_page=full_page)

    return save


@pytest.fixture(autouse=True)
def archive_to_tmp(settings, tmp_path):
    """The live server commits for real, so binding archives are written: keep them out
    of the working folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
