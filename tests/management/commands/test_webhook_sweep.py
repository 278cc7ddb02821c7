"""`manage.py webhook_sweep --every`: the sweeper `dev.py demo` keeps beside its server,
sending every delivery without a broker (no request sends one), new ones at once."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from agentdocs.models import Delivery
from agentdocs.services import deliveries as delivery_service
from agentdocs.services import events as event_service
from agentdocs.services import webhooks as webhook_service

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("every", ["0", "-1", "nan", "inf"])
def test_every_must_be_a_positive_number_of_seconds(db, every):
    with pytest.raises(CommandError, match="--every"):
        call_command("webhook_sweep", "--every", every)


def test_one_sweep_sends_a_new_delivery_and_a_queued_ping_without_a_broker(
    celery_eager, tenant, project, admin, webhook_receiver, django_capture_on_commit_callbacks
):
    hook = webhook_service.webhook_create(
        tenant=tenant,
        url=webhook_receiver.url,
        events=["document.updated"],
        projects=None,
        user=admin,
    ).webhook
    with django_capture_on_commit_callbacks(execute=True):
        ping = delivery_service.webhook_test(webhook=hook, user=admin)
        event = event_service.emit(
            type="document.updated", tenant=tenant, project=project, actor=admin, target="a.md"
        )
    assert webhook_receiver.received == []

    out = io.StringIO()
    # The default --older-than: a delivery no task was ever enqueued for is not "stuck".
    with django_capture_on_commit_callbacks(execute=True):
        call_command("webhook_sweep", stdout=out)
    assert "2 webhook deliveries" in out.getvalue()
    sent = sorted(h["Webhook-Id"] for _, h in webhook_receiver.received)
    assert sent == sorted([ping.event_id, event.id])
    assert set(Delivery.objects.values_list("state", flat=True)) == {"succeeded"}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # exited, whether or not anything reaped it yet


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
@pytest.mark.parametrize("starter_lives", [2, 0])
def test_it_sweeps_until_the_process_that_started_it_exits(
    tmp_path, starter_lives, migrated_sqlite
):
    """Started by a process that then exits (a server killed, not interrupted), the
    sweeper does not outlive it by more than one period; nor when the process exited
    while the sweeper was still starting (`--parent` names it)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AGENTDOCS_", "REDIS", "CELERY", "DATABASE"))
    }
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        SECRET_KEY="a-test-key-" + "x" * 40,
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    manage = [sys.executable, str(ROOT / "manage.py")]
    shutil.copyfile(migrated_sqlite, tmp_path / "db.sqlite3")
    starter = (
        "import os, subprocess, sys, time\n"
        f"command = {[*manage, 'webhook_sweep', '--every', '0.2', '--parent']!r}\n"
        "child = subprocess.Popen([*command, str(os.getpid())],\n"
        "    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(child.pid, flush=True)\n"
        f"time.sleep({starter_lives})\n"
    )
    started = subprocess.run(
        [sys.executable, "-c", starter],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    sweeper = int(started.stdout.strip())
    try:
        deadline = time.monotonic() + 10
        while _alive(sweeper) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(sweeper), "the sweeper outlived the process that started it"
    finally:
        if _alive(sweeper):
            os.kill(sweeper, 9)
