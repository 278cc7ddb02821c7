"""Re-enqueue archival of binding records a worker never finished, as the beat task does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdocs.services import archival


class Command(BaseCommand):
    help = (
        "Enqueue archival again for binding records still not archived some time after they "
        "were made (the same sweep Celery beat runs)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than",
            type=int,
            default=settings.AGENTDOCS_ARCHIVE_SWEEP_AFTER_SECONDS,
            metavar="SECONDS",
            help="Only records made at least this long ago (default: %(default)s).",
        )
        parser.add_argument(
            "--limit", type=int, default=1000, help="At most this many records per run."
        )

    def handle(self, *args: Any, older_than: int, limit: int, **options: Any) -> None:
        if older_than < 0 or limit < 1:
            raise CommandError("--older-than must be at least 0 and --limit at least 1.")
        record_ids = archival.archive_sweep(older_than=timedelta(seconds=older_than), limit=limit)
        self.stdout.write(f"Enqueued {len(record_ids)} unarchived binding records.")
