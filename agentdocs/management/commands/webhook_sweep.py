"""Enqueue webhook deliveries that are due, as the beat task does: without a broker
(the embedded default) this is what sends retries, so run it from cron."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdocs.services import webhooks as webhook_service


class Command(BaseCommand):
    help = (
        "Enqueue webhook deliveries whose retry is due or whose task never ran (a worker "
        "killed mid-delivery); the same sweep Celery beat runs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than",
            type=int,
            default=settings.AGENTDOCS_WEBHOOK_SWEEP_AFTER_SECONDS,
            metavar="SECONDS",
            help="Enqueue again a delivery whose task was due this long ago and has not run "
            "(default: %(default)s).",
        )
        parser.add_argument(
            "--limit", type=int, default=1000, help="At most this many deliveries per run."
        )

    def handle(self, *args: Any, older_than: int, limit: int, **options: Any) -> None:
        if older_than < 0 or limit < 1:
            raise CommandError("--older-than must be at least 0 and --limit at least 1.")
        delivery_ids = webhook_service.delivery_sweep(
            older_than=timedelta(seconds=older_than), limit=limit
        )
        self.stdout.write(f"Enqueued {len(delivery_ids)} webhook deliveries.")
