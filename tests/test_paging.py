"""`agentdocs.paging`: a count capped at a limit, pages past it read by offset with
one row more, and late row lookup that reads the same rows as a plain offset."""

from __future__ import annotations

import pytest
from django.core.paginator import EmptyPage, Paginator
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agentdocs.models import Event
from agentdocs.paging import CappedPaginator, LateRows, OpenPage, Prepended, capped_count

pytestmark = pytest.mark.django_db


@pytest.fixture
def events(tenant):
    """12 events, all at one moment (as bulk writes make them): only `-id` orders them."""
    Event.objects.filter(tenant=tenant).delete()
    now = timezone.now()
    Event.objects.bulk_create(
        [
            Event(
                id=f"evt_{n:02d}",
                tenant=tenant,
                type="setting.changed",
                kind="setting",
                action="updated",
                target=f"memory.k{n:02d}",
                created_at=now,
            )
            for n in range(12)
        ]
    )
    return Event.objects.filter(tenant=tenant).order_by("-created_at", "-id")


def _ids(rows) -> list[str]:
    return [row.id for row in rows]


NEWEST_FIRST = [f"evt_{n:02d}" for n in reversed(range(12))]


@pytest.mark.parametrize("limit", [12, 50])
def test_at_or_below_the_limit_the_count_is_exact_as_djangos(events, limit):
    paginator = CappedPaginator(events, 5, count_limit=limit)
    plain = Paginator(events, 5)
    assert (paginator.count, paginator.count_exact, paginator.num_pages) == (12, True, 3)
    for number in (1, 2, 3):
        page, expected = paginator.page(number), plain.page(number)
        assert _ids(page) == _ids(expected)
        assert (page.has_next(), page.start_index(), page.end_index()) == (
            expected.has_next(),
            expected.start_index(),
            expected.end_index(),
        )
    with pytest.raises(EmptyPage):
        paginator.page(4)


def test_above_the_limit_the_count_is_a_lower_bound_and_every_row_is_reachable(events):
    paginator = CappedPaginator(events, 5, count_limit=5)
    assert (paginator.count, paginator.count_exact) == (5, False)
    assert paginator.num_pages == 2  # the limit and one row more: two pages known
    seen, number = [], 1
    while True:
        page = paginator.page(number)
        seen += _ids(page)
        if not page.has_next():
            break
        number = page.next_page_number()
    assert seen == NEWEST_FIRST
    last = paginator.page(3)  # past the known pages: read by offset
    assert isinstance(last, OpenPage)
    assert (_ids(last), last.has_next(), last.has_previous()) == (NEWEST_FIRST[10:], False, True)
    assert (last.start_index(), last.end_index()) == (11, 12)
    # What "Page N of ..." can say: the last page knows; others, at least one page more.
    assert [paginator.page(n).pages_known for n in (1, 2, 3)] == [2, 3, 3]
    with pytest.raises(EmptyPage):
        paginator.page(4)
    with pytest.raises(EmptyPage):
        paginator.page(0)


def test_get_page_past_the_end_of_a_bound_is_the_last_known_page(events):
    paginator = CappedPaginator(events, 5, count_limit=5)
    assert paginator.get_page(99).number == 2
    assert paginator.get_page("abc").number == 1
    assert paginator.get_page(3).number == 3  # it holds rows: shown as asked


def test_the_count_stops_at_the_limit_and_one(events):
    with CaptureQueriesContext(connection) as queries:
        assert capped_count(events, 5) == 6
        assert capped_count(events, 100) == 12
    assert len(queries) == 2
    first = queries[0]["sql"].upper()
    assert "COUNT(" in first and "LIMIT 6" in first and "ORDER BY" not in first
    assert capped_count(list(range(30)), 5) == 30  # a list is counted whole


def test_a_page_costs_two_queries_whether_the_count_is_exact_or_not(events):
    for limit in (5, 50):
        with CaptureQueriesContext(connection) as queries:
            list(CappedPaginator(LateRows(events), 5, count_limit=limit).page(2))
        assert len(queries) == 2, limit


@pytest.mark.parametrize(("start", "stop"), [(0, 5), (5, 10), (10, 15), (11, 12), (7, 8)])
def test_late_rows_read_the_same_rows_as_a_plain_offset(events, start, stop):
    late = events.select_related("project")
    with CaptureQueriesContext(connection) as queries:
        rows = list(LateRows(late)[start:stop])
    assert _ids(rows) == _ids(events[start:stop])
    assert len(queries) == 1
    sql = queries[0]["sql"].upper()
    # The first page skips nothing: a plain slice.
    assert (" IN (SELECT" in sql) is (start > 0)
    assert "ORDER BY" in sql.rsplit(")", 1)[-1]
    assert LateRows(events)[3].id == NEWEST_FIRST[3]


def test_late_rows_page_as_the_queryset_does(events):
    for limit in (5, 50):
        plain = CappedPaginator(events, 5, count_limit=limit)
        late = CappedPaginator(LateRows(events), 5, count_limit=limit)
        assert (late.count, late.count_exact) == (plain.count, plain.count_exact)
        for number in (1, 2, 3):
            assert _ids(late.page(number)) == _ids(plain.page(number))


def test_prepended_rows_page_as_one_list_and_read_only_their_slice(events):
    queryset = Event.objects.filter(pk__in=[e.pk for e in events]).order_by("-id")
    whole = ["head", *queryset]
    rows = Prepended(["head"], queryset)
    assert rows.count() == len(rows) == 13 and rows.ordered
    for start, stop in ((0, 5), (0, 1), (1, 6), (5, 13), (12, None), (0, None), (20, 25)):
        assert rows[start:stop] == whole[start:stop], (start, stop)
    assert rows[0] == "head" and rows[3] == whole[3]
    with CaptureQueriesContext(connection) as captured:
        rows[0:1]
    assert len(captured) == 0  # the head alone reads nothing
    pages = [CappedPaginator(rows, 5).page(n).object_list for n in (1, 2, 3)]
    assert [len(page) for page in pages] == [5, 5, 3]
    assert [row for page in pages for row in page] == whole
