"""Walk the hash chain of every tenant's history (or one tenant's) and report the
first broken link of each; exit status 1 when any chain is broken."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdocs.models import Tenant
from agentdocs.services import audit_chain


class Command(BaseCommand):
    help = (
        "Verify the hash chain over the history rows of each tenant: prints one JSON "
        "line per tenant ({tenant, ok, checked, broken_at}); exits 1 when any is broken."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", metavar="SLUG", help="Only this tenant.")

    def handle(self, *args: Any, **options: Any) -> None:
        tenants = Tenant.objects.order_by("slug")
        if options["tenant"]:
            tenants = tenants.filter(slug=options["tenant"])
            if not tenants.exists():
                raise CommandError(f"No tenant {options['tenant']!r}.")
        broken = 0
        for tenant in tenants:
            report = audit_chain.audit_chain_verify(tenant=tenant)
            broken += not report["ok"]
            self.stdout.write(json.dumps({"tenant": tenant.slug, **report}, sort_keys=True))
        if broken:
            self.stderr.write(f"{broken} broken chain(s).")
            sys.exit(1)
