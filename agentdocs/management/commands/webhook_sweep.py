"""Enqueue webhook deliveries that are due, as the beat task does. Without a broker
(the embedded default) this is what sends every delivery, first attempts and retries
alike (no request sends one), so keep it running with `--every` beside the server
(`dev.py demo` does) or run it from cron."""

from __future__ import annotations

import math
import os
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections

from agentdocs.services import deliveries as delivery_service


class Command(BaseCommand):
    help = (
        "Enqueue webhook deliveries whose retry is due or whose task never ran (a worker "
        "killed mid-delivery); the same sweep Celery beat runs. Without a broker it sends "
        "them itself, new deliveries and test pings included."
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
        parser.add_argument(
            "--every",
            type=float,
            default=None,
            metavar="SECONDS",
            help="Sweep again this many seconds after each sweep, until interrupted or "
            "until the process that started this one exits; once when not given.",
        )
        parser.add_argument(
            "--parent",
            type=int,
            default=None,
            metavar="PID",
            help="With --every: the process that started this one, as that process knows "
            "its id; sweep only while it runs, even if it exited while this one was "
            "starting (default: the parent as found once started).",
        )

    def handle(
        self,
        *args: Any,
        older_than: int,
        limit: int,
        every: float | None,
        parent: int | None,
        **options: Any,
    ) -> None:
        if older_than < 0 or limit < 1:
            raise CommandError("--older-than must be at least 0 and --limit at least 1.")
        if every is not None and not (every > 0 and math.isfinite(every)):
            raise CommandError("--every must be a positive number of seconds.")
        if every is None:
            self.stdout.write(f"Enqueued {self._sweep(older_than, limit)} webhook deliveries.")
            return
        if parent is None:
            parent = os.getppid()
        try:
            # A sweeper started beside a server (dev.py demo) ends with it, even when the
            # server is killed rather than interrupted.
            while os.getppid() == parent:
                close_old_connections()  # as around a request: none held between sweeps
                count = self._sweep(older_than, limit)
                if count:
                    self.stdout.write(f"Enqueued {count} webhook deliveries.")
                    self.stdout.flush()
                time.sleep(every)
        except KeyboardInterrupt:
            pass

    def _sweep(self, older_than: int, limit: int) -> int:
        # Without a broker the enqueued task runs here, when the sweep's claim commits.
        return len(
            delivery_service.delivery_sweep(older_than=timedelta(seconds=older_than), limit=limit)
        )
