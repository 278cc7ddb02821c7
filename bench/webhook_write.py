#!/usr/bin/env python3
"""How long a writer's PUT takes when the tenant's webhooks go to a slow receiver.

Without a broker (the embedded default) a delivery once ran inside the writer's
request: with 3 webhooks to a receiver that answers after 5 s a PUT took 15 s. Now the
write only stores the deliveries and the sweeper (`manage.py webhook_sweep`) sends
them. For each number of webhooks this prints the PUT's time, how many requests the
receiver had been sent when the PUT answered, and how long the sweep that then sends
them takes (the time the sweeper, not the writer, spends).

    .venv/bin/python bench/webhook_write.py [--webhooks 3 7] [--delay 5]

A throwaway SQLite database and a receiver on 127.0.0.1. It is a measurement, not a
test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
for name in ("REDIS_URL", "CELERY_BROKER_URL"):  # no broker: the case measured
    os.environ.pop(name, None)


class SlowReceiver(BaseHTTPRequestHandler):
    delay = 5.0
    hits = 0
    lock = threading.Lock()

    def do_POST(self) -> None:
        with SlowReceiver.lock:
            SlowReceiver.hits += 1
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(SlowReceiver.delay)
        try:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")
        except OSError:
            pass  # the sender timed out and left

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--webhooks", type=int, nargs="+", default=[3, 7])
    parser.add_argument("--delay", type=float, default=5.0, help="the receiver's answer time")
    args = parser.parse_args()
    SlowReceiver.delay = args.delay

    folder = tempfile.mkdtemp(prefix="agentdocs-bench-webhooks-")
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/db.sqlite3"
    import logging

    import django

    django.setup()
    logging.disable(logging.WARNING)  # each task's log line, each timed-out attempt
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from agentdocs.models import Delivery, Role
    from agentdocs.services import deliveries as delivery_service
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service
    from agentdocs.services import tokens as token_service
    from agentdocs.services import webhooks as webhook_service

    call_command("migrate", verbosity=0)
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowReceiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"

    users = get_user_model()
    admin = users.objects.create_user(username="admin", password=None)
    writer = users.objects.create_user(username="writer", password=None)
    print(f"receiver answers after {args.delay:g} s; no broker")
    print(f"{'webhooks':>8}  {'PUT s':>7}  {'status':>6}  {'sent during PUT':>15}  {'sweep s':>7}")
    for count in args.webhooks:
        slug = f"t{count}"
        tenant = tenant_service.tenant_create(slug=slug, name=slug, user=admin)
        tenant_service.membership_set(
            tenant=tenant, username=writer.username, role=Role.WRITER, actor=admin
        )
        project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
        document_service.document_create(
            project=project, path="agent.md", body="one\n", user=admin, reason="bench"
        )
        for _ in range(count):
            webhook_service.webhook_create(
                tenant=tenant, url=url, events=["document.updated"], projects=None, user=admin
            )
        key = token_service.token_create(user=writer, name="w", scopes=["read", "write"]).key
        SlowReceiver.hits = 0
        started = time.perf_counter()
        response = Client().put(
            f"/api/v1/tenants/{slug}/projects/web/documents/agent.md",
            data='{"body": "two\\n", "version": 1, "reason": "bench"}',
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Token {key}",
        )
        put_seconds = time.perf_counter() - started
        sent_during_put = SlowReceiver.hits
        started = time.perf_counter()
        delivery_service.delivery_sweep()
        sweep_seconds = time.perf_counter() - started
        deliveries = Delivery.objects.filter(webhook__tenant=tenant)
        states = set(deliveries.values_list("state", flat=True))
        print(
            f"{count:>8}  {put_seconds:>7.3f}  {response.status_code:>6}  "
            f"{sent_during_put:>15}  {sweep_seconds:>7.2f}  deliveries: {', '.join(sorted(states))}"
        )
    server.shutdown()
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
