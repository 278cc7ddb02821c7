"""What a member's request costs at the sizes of issue 23's finding 6, against its budget.

Seeds one PostgreSQL database (a tenant `acme` whose project `web` holds 1,300
`.AGENTS/` documents, a 255 KiB `agent.md` with 150 versions, 2,000 binding records
and a change request proposing 256 KiB; `seed_large_tenant` does the bulk inserts),
then sends each request a reader (or, where only a writer may, a writer) makes, in
process through Django's test client with the production settings, `--repeat` times.
Prints each request's median wall time and its response bytes against the budget of
0.5 s and 1 MB, with pass or fail; exits 1 if a request answers another status than
expected (or, with `--strict`, is over its budget).

    .venv/bin/python bench/member_budgets.py [--repeat 5] [--documents 1300] ...

See bench/README.md ("Member budgets").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

# The repository instead of bench/ on the path: `bench.common` imports as a package.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import (  # noqa: E402
    app_environment,
    database_url,
    drop_database,
    recreate_database,
)

BUDGET_SECONDS = 0.5
BUDGET_BYTES = 1_000_000
KIB = 1024
# An export answers 200 under `AGENTDOCS_MAX_EXPORT_BYTES` and 413 over it: either is right.
ANY = (200, 413)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="agentdocs_member_budgets")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--documents", type=int, default=1300)
    parser.add_argument("--document-bytes", type=int, default=1400)
    parser.add_argument("--versions", type=int, default=150)
    parser.add_argument("--version-kib", type=int, default=255)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--proposal-kib", type=int, default=256)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a request is over its budget"
    )
    return parser.parse_args()


def _seed(args: argparse.Namespace) -> dict[str, object]:
    """The tenant, its cast and the change request; what the requests need to name."""
    from django.contrib.auth import get_user_model

    from agentdocs.management.commands.seed_large_tenant import build_large_tenant, filler_text
    from agentdocs.models import Role
    from agentdocs.services import changes as change_service
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service
    from agentdocs.services import tokens as token_service
    from bench.memory_block_seed import signed_in_session

    users = get_user_model()
    alice = users.objects.create_user(username="alice", password=None)
    carol = users.objects.create_user(username="carol", password=None)
    tenant = tenant_service.tenant_create(slug="acme", name="Acme", user=alice)
    tenant_service.membership_set(
        tenant=tenant, username=carol.username, role=Role.READER, actor=alice
    )
    web = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=alice)
    document_service.document_create(
        project=web, path="agent.md", body="# Rules\n\n- keep it small.\n", user=alice
    )
    build_large_tenant(
        tenant=tenant,
        user=alice,
        projects=0,
        documents=args.documents,
        versions=args.versions,
        records=args.records,
        documents_project="web",
        document_bytes=args.document_bytes,
        version_bytes=args.version_kib * KIB,
    )
    # A rewrite of every line of an older version: the largest diffs a proposal makes.
    proposal = filler_text(args.proposal_kib * KIB - 1, seed=2, title="# Rules, proposed")
    base = max(args.versions // 2, 1)
    change = change_service.change_propose(
        project=web,
        path="agent.md",
        body=proposal,
        base_version=base,
        reason="benchmark: a long proposal",
        user=carol,
    )
    token = token_service.token_create(user=carol, name="budgets", scopes=["read"]).key
    return {
        "token": token,
        "session": signed_in_session(carol),
        "change": change.pk,
        "versions": args.versions,
    }


def _requests(
    seeded: dict[str, object],
) -> list[tuple[str, str, str, dict, int | tuple[int, ...]]]:
    """(name, "api", "page" or "mcp", path, extra, expected status)."""
    api = "/api/v1/tenants/acme/projects/web"
    change = seeded["change"]
    # "cascade" is in every version's text; "zentinel" in none: each reads every body.
    every, none = "cascade", "zentinel"
    mcp_call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_documents", "arguments": {"query": "cascade"}},
    }
    return [
        ("history API ?q= (in every version)", "api", f"{api}/history/agent.md?q={every}", {}, 200),
        ("history API ?q= (in none)", "api", f"{api}/history/agent.md?q={none}", {}, 200),
        (
            "history API ?q= scan_next",
            "api",
            f"{api}/history/agent.md?q={none}&before={int(seeded['versions']) - 19}",
            {},
            200,
        ),
        ("history page ?q=", "page", f"/t/acme/web/history/agent.md?q={none}", {}, 200),
        ("export ?format=all (JSON)", "api", f"{api}/export/?format=all", {}, ANY),
        (
            "export ?format=all (zip)",
            "api",
            f"{api}/export/?format=all",
            {"HTTP_ACCEPT": "application/zip"},
            ANY,
        ),
        ("export ?format=agents-md (JSON)", "api", f"{api}/export/?format=agents-md", {}, ANY),
        ("export ?format=cursor (JSON)", "api", f"{api}/export/?format=cursor", {}, ANY),
        ("Export page (all)", "page", "/t/acme/web/export/", {}, 200),
        ("Export page, zip of all", "page", "/t/acme/web/export/?format=all&download=zip", {}, ANY),
        (
            "Export page, one file",
            "page",
            "/t/acme/web/export/?format=cursor&file=.cursor/rules/doc00000.mdc",
            {},
            200,
        ),
        ("MCP search_documents", "mcp", "/mcp/acme/web/", {"json": mcp_call}, 200),
        ("search API ?q=", "api", f"/api/v1/tenants/acme/search/?q={every}&project=web", {}, 200),
        ("change request API", "api", f"{api}/changes/{change}", {}, 200),
        ("change request page", "page", f"/t/acme/web/changes/{change}/", {}, 200),
        (
            "change request whole diff (API)",
            "api",
            f"{api}/changes/{change}/diff?against=base",
            {},
            200,
        ),
    ]


def _send(client, kind: str, path: str, extra: dict, seeded: dict[str, object]):
    headers = dict(extra)
    body = headers.pop("json", None)
    if kind in ("api", "mcp"):
        headers["HTTP_AUTHORIZATION"] = f"Bearer {seeded['token']}"
    if kind == "mcp":
        headers["HTTP_ACCEPT"] = "application/json, text/event-stream"
        return client.post(path, json.dumps(body), content_type="application/json", **headers)
    return client.get(path, **headers)


def _size(response) -> int:
    if getattr(response, "streaming", False):
        return sum(len(chunk) for chunk in response.streaming_content)
    return len(response.content)


def measure(seeded: dict[str, object], repeat: int) -> list[dict[str, object]]:
    from django.conf import settings
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    client.cookies[settings.SESSION_COOKIE_NAME] = str(seeded["session"])
    rows = []
    for name, kind, path, extra, expected in _requests(seeded):
        times, sizes, statuses = [], [], set()
        for _ in range(repeat):
            started = time.perf_counter()
            response = _send(client, kind, path, extra, seeded)
            size = _size(response)
            times.append(time.perf_counter() - started)
            sizes.append(size)
            statuses.add(response.status_code)
        seconds, size = statistics.median(times), max(sizes)
        rows.append(
            {
                "request": name,
                "status": sorted(statuses),
                "expected": expected,
                "median_s": round(seconds, 4),
                "bytes": size,
                "status_ok": statuses
                <= set(expected if isinstance(expected, tuple) else (expected,)),
                "pass": seconds <= BUDGET_SECONDS and size <= BUDGET_BYTES,
            }
        )
    return rows


def report(rows: list[dict[str, object]]) -> str:
    width = max(len(str(row["request"])) for row in rows)
    lines = [
        f"{'request':<{width}}  status  median s  bytes      budget 0.5 s / 1 MB",
        "-" * (width + 48),
    ]
    for row in rows:
        status = ",".join(str(code) for code in row["status"])  # type: ignore[attr-defined]
        verdict = "pass" if row["pass"] else "FAIL"
        if not row["status_ok"]:
            verdict += f" (expected {row['expected']})"
        lines.append(
            f"{row['request']:<{width}}  {status:<6}  {row['median_s']:>8.3f}  "
            f"{row['bytes']:>9,}  {verdict}"
        )
    return "\n".join(lines)


def main() -> int:
    args = _arguments()
    recreate_database(args.postgres, args.database)
    env = app_environment(database_url(args.postgres, args.database), None)
    os.environ.update(env)
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        started = time.perf_counter()
        seeded = _seed(args)
        print(f"seeded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        rows = measure(seeded, args.repeat)
        print(report(rows))
        if args.json:
            print(json.dumps(rows))
        if not all(row["status_ok"] for row in rows):
            return 1
        return 0 if all(row["pass"] for row in rows) or not args.strict else 1
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            drop_database(args.postgres, args.database)


if __name__ == "__main__":
    sys.exit(main())
