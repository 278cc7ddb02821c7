#!/usr/bin/env python3
"""What reading by label costs (issue 29): a full Memory Block render without a label,
with a label every document has on an older version, and with a label no document has
(every document falls back to its latest), with the render cache off and on, in one run.

    .venv/bin/python bench/labels.py [--renders 200] [--rounds 5]
                                     [--postgres URL | --sqlite]

Renders go through the whole Django stack (`POST .../memory-block/`, a reader's API
token, `Accept: text/plain`), each with a new process id, so every render is the full
text. The six sides (three labels, cache off and on) run one after the other in every
round, so the ratios of one run are what count (the machine's load moves every side).
It prints the median and best milliseconds per render, the medians of the rounds'
ratios, and the queries each side sends (deterministic).

PostgreSQL by default (the database `agentdocs_bench_labels` is created and dropped on
`--postgres`, default postgres://postgres@127.0.0.1:5432/postgres); `--sqlite` uses a
throwaway file. The cache is the process's local memory (one process: the render cache
may be on). It asserts nothing about time; it stops if a side renders the wrong text.

Then the labels list (issue 34): `GET .../documents/{path}/labels/` of a document that
carries `--list-labels` labels (800 by default: more than the cap of
`AGENTDOCS_MAX_LABELS_PER_DOCUMENT`, as a document labelled before the cap may), its
first page and its last, `--list-requests` times each: milliseconds, bytes and queries.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
DATABASE = "agentdocs_bench_labels"
CONTEXT_DOCUMENTS = 7  # .AGENTS/*.md, besides agent.md: 8 documents in the render
LABELS = {"none": None, "canary": "canary", "absent": "staging"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--renders", type=int, default=200, help="renders per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--sqlite", action="store_true", help="a throwaway SQLite file instead")
    parser.add_argument("--list-labels", type=int, default=800, help="labels of the listed one")
    parser.add_argument("--list-requests", type=int, default=20, help="list requests per page")
    args = parser.parse_args()

    from bench.common import in_process_database, load_average

    print(f"load average at the start: {load_average()}")
    try:
        with in_process_database(name=DATABASE, admin_url=args.postgres, sqlite=args.sqlite):
            _measure(args)
    finally:
        print(f"load average at the end: {load_average()}")


def _per_op(run: Callable[[], None], count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        run()
    return (time.perf_counter() - started) / count


def _measure(args: argparse.Namespace) -> None:
    from django.db import connection
    from django.test import Client, override_settings
    from django.test.utils import CaptureQueriesContext

    from agentdocs.services import documents as document_service
    from agentdocs.services import labels as label_service
    from agentdocs.services import tenancy as tenant_service
    from agentdocs.services import tokens as token_service
    from bench.common import in_process_cast

    admin, reader, tenant = in_process_cast()
    project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
    # Every document of the render has three versions; `canary` names the first (the
    # text marked OLD), the latest is marked NEW. `staging` names none of them.
    paths = ["agent.md"] + [f".AGENTS/notes-{i}.md" for i in range(CONTEXT_DOCUMENTS)]
    for path in paths:
        filler = ("be kind\n" * 200) if path == "agent.md" else ("x" * 60 + "\n") * 33
        document = document_service.document_create(
            project=project, path=path, body=f"OLD {path}\n{filler}", user=admin
        )
        for version in (2, 3):
            marker = "NEW" if version == 3 else "MID"
            document = document_service.document_write(
                document=document,
                body=f"{marker} {path}\n{filler}",
                base_version=document.version,
                user=admin,
                reason="bench",
            ).document
        label_service.label_move(document=document, name="canary", version=1, user=admin)
    key = token_service.token_create(user=reader, name="r", scopes=["read", "render"]).key
    client = Client(HTTP_AUTHORIZATION=f"Token {key}", HTTP_ACCEPT="text/plain")
    url = f"/api/v1/tenants/{tenant.slug}/projects/{project.slug}/memory-block/"

    def render(label: str | None) -> Callable[[], str]:
        def run() -> str:
            body = {"process": f"p-{uuid.uuid4().hex}"}
            if label is not None:
                body["label"] = label
            response = client.post(url, body, content_type="application/json")
            assert response.status_code == 200, response.content
            return response.content.decode()

        return run

    # Each side reads what it should, once, before anything is timed.
    for cache in (False, True):
        with override_settings(AGENTDOCS_RENDER_CACHE=cache):
            for name, label in LABELS.items():
                text = render(label)()
                marker = "OLD" if name == "canary" else "NEW"
                found = sum(f"{marker} {path}" in text for path in paths)
                assert found == len(paths), (name, cache, found, text[:2000])
    print(f"each render: {len(paths)} documents, every one read at the expected version")

    sides = [(name, cache) for cache in (False, True) for name in LABELS]
    results: dict[tuple[str, bool], list[float]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for name, cache in sides:
            with override_settings(AGENTDOCS_RENDER_CACHE=cache):
                results[(name, cache)].append(_per_op(render(LABELS[name]), args.renders))

    print(f"database: {connection.vendor}; {args.rounds} rounds of {args.renders} renders per side")
    print(f"{'':28}{'median ms':>10}{'best ms':>9}{'queries':>9}")
    queries: dict[tuple[str, bool], int] = {}
    for name, cache in sides:
        with override_settings(AGENTDOCS_RENDER_CACHE=cache):
            run = render(LABELS[name])
            run()  # the cache holds this side's rows, as it would between renders
            with CaptureQueriesContext(connection) as captured:
                run()
        queries[(name, cache)] = len(captured)
    for name, cache in sides:
        values = results[(name, cache)]
        title = f"{name} (render cache {'on' if cache else 'off'})"
        print(
            f"{title:28}{statistics.median(values) * 1000:>10.3f}"
            f"{min(values) * 1000:>9.3f}{queries[(name, cache)]:>9}"
        )

    def ratio(slow: tuple[str, bool], fast: tuple[str, bool]) -> float:
        pairs = zip(results[slow], results[fast], strict=True)
        return statistics.median(a / b for a, b in pairs)

    for cache in (False, True):
        state = "on" if cache else "off"
        for name in ("canary", "absent"):
            print(
                f"{name} / none, render cache {state}: "
                f"{ratio((name, cache), ('none', cache)):.3f} (median of rounds)"
            )
    for name in LABELS:
        print(
            f"{name}: render cache on / off: "
            f"{ratio((name, True), (name, False)):.3f} (median of rounds)"
        )
    # The statements of one render of each label, cache off: what the label changes.
    with override_settings(AGENTDOCS_RENDER_CACHE=False):
        for name, label in LABELS.items():
            with CaptureQueriesContext(connection) as captured:
                render(label)()
            # A statement prepared once per connection (the token and access) shows no text.
            sizes = ", ".join(
                f"{len(query['sql'])} characters" if query["sql"] else "prepared"
                for query in captured.captured_queries
            )
            print(f"{name}, cache off: statements {sizes}")
    _measure_list(
        args, project=project, user=admin, client=Client(HTTP_AUTHORIZATION=f"Token {key}")
    )


def _measure_list(args: argparse.Namespace, *, project, user, client) -> None:
    """The labels list of a document that carries ``--list-labels`` labels: its first and
    its last page, each answer's size and queries."""
    from django.db import connection

    from agentdocs.models import DocumentLabel
    from agentdocs.services import documents as document_service

    document = document_service.document_create(
        project=project, path="many-labels.md", body="labelled\n", user=user
    )
    DocumentLabel.objects.bulk_create(
        DocumentLabel(document=document, name=f"label-{n:04}", version=1, moved_by=user)
        for n in range(args.list_labels)
    )
    url = (
        f"/api/v1/tenants/{project.tenant.slug}/projects/{project.slug}"
        "/documents/many-labels.md/labels/"
    )
    first = client.get(url).json()
    assert first["count"] == args.list_labels + 1, first["count"]
    pages = {"first page": url, "last page": f"{url}?page=last"}
    print(
        f"labels list of a document with {args.list_labels} labels, {args.list_requests} requests:"
    )
    for name, address in pages.items():
        response = client.get(address)
        assert response.status_code == 200, response.content[:500]
        statements: list[str] = []

        def count(execute, sql, params, many, context, statements=statements):
            statements.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            client.get(address)
        seconds = _per_op(lambda address=address: client.get(address), args.list_requests)
        print(
            f"  {name}: {seconds * 1000:.2f} ms, {len(response.content):,} bytes, "
            f"{len(response.json()['results'])} entries, {len(statements)} queries"
        )


if __name__ == "__main__":
    main()
