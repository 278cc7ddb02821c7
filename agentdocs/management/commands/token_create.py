"""`manage.py token_create USER [--tenant T] [--scopes read,render] [--expires-in-days N]`:
create an API token for a user and print its key (the only time it is shown)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdocs.core.errors import AgentdocsError
from agentdocs.models import Scope, Tenant
from agentdocs.services import tokens as token_service


class Command(BaseCommand):
    help = "Create an API token for USER and print its key (shown only this once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--tenant", help="the token works only in this tenant (its slug)")
        parser.add_argument(
            "--scopes",
            default=",".join(Scope.values),
            help=f"comma-separated, of {', '.join(Scope.values)} (default: all of them; "
            "the user's role still caps what the token can do)",
        )
        parser.add_argument("--expires-in-days", type=int, default=None)
        parser.add_argument("--name", default="", help="default: 'manage.py token_create'")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user {options['username']!r}.")
        tenant = None
        if options["tenant"]:
            tenant = Tenant.objects.filter(slug=options["tenant"]).first()
            if tenant is None:
                raise CommandError(f"No tenant {options['tenant']!r}.")
        scopes = [scope.strip() for scope in options["scopes"].split(",") if scope.strip()]
        try:
            new = token_service.token_create(
                user=user,
                name=options["name"] or "manage.py token_create",
                scopes=scopes,
                tenant=tenant,
                expires_in_days=options["expires_in_days"],
                reason="Created with manage.py token_create",
            )
        except AgentdocsError as error:
            raise CommandError(error.detail) from None
        self.stdout.write(new.key)
