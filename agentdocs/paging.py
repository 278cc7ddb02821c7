"""Pages of a list whose cost does not grow with the list: a capped count, and late
row lookup for deep pages. Shared by the API's `Pagination` and the pages' `list_page`.

A capped count. `SELECT COUNT(*)` visits every matching row, even as an index-only
scan: 10 ms for a large tenant's 120,000 events, paid by every page of the feed. So
`CappedPaginator` counts exactly only up to `AGENTDOCS_PAGINATION_COUNT_LIMIT` rows
(Elasticsearch's `track_total_hits` does the same), as `SELECT COUNT(*) FROM (SELECT
... LIMIT limit + 1)`, which the database stops reading once it has the limit and one.
At or below the limit nothing changes. Above it `count` is the limit and
`count_exact` is False: a lower bound. Whether a page has a next one is then known by
reading one row more than the page, never from the count, so following `next` reaches
every row, those past the limit included; a page number past the limit is read as an
offset like any other; only "the last page" cannot be named.

Late row lookup. PostgreSQL reads the table row of every row an OFFSET skips, so page
200 of a document's history read 10,000 versions to show 50. `LateRows(queryset)`
reads a page as ``queryset.filter(pk__in=<the same queryset's pks, sliced>)``, one
query with a sliced subquery (PostgreSQL and SQLite run it): the skipped rows are
read from the index alone, and only the page's rows from the table. The outer query
keeps the queryset's ORDER BY, so the order is the same. Only for querysets whose
rows do not depend on their neighbours: a Window annotation (`Lag` over the previous
version, as in `selectors.history`) would be computed over the page alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.paginator import EmptyPage, Page, Paginator
from django.db.models import QuerySet
from django.utils.functional import cached_property


class LateRows:
    """A queryset whose slices are read by late row lookup; what a paginator needs of a
    queryset (`count`, slices, `ordered`), nothing more."""

    def __init__(self, queryset: QuerySet) -> None:
        self.queryset = queryset

    @property
    def ordered(self) -> bool:
        return self.queryset.ordered

    def count(self) -> int:
        return self.queryset.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, int):
            return self[key : key + 1][0]
        if not key.start:
            # Nothing skipped: the plain slice reads no row it does not return.
            return self.queryset[key]
        # Evaluated lazily, like a queryset's own slice.
        return self.queryset.filter(pk__in=self.queryset.values("pk")[key])


class Prepended:
    """A list of a few given rows, then a queryset's: what a paginator needs of it
    (`count`, slices, `ordered`). The labels list pages `latest` and then the document's
    named labels; a page reads only its slice of the queryset."""

    def __init__(self, head: Sequence[Any], rows: QuerySet) -> None:
        self.head = list(head)
        self.rows = rows

    @property
    def ordered(self) -> bool:
        return self.rows.ordered

    def count(self) -> int:
        return len(self.head) + self.rows.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, int):
            return self[key : key + 1][0]
        if key.step is not None:
            raise ValueError("Prepended takes slices without a step.")
        start = key.start or 0
        stop = key.stop
        shown = self.head[start:stop]
        skip = len(self.head)
        rest_start = max(start - skip, 0)
        rest_stop = None if stop is None else max(stop - skip, 0)
        if rest_stop is not None and rest_stop <= rest_start:
            return shown
        return shown + list(self.rows[rest_start:rest_stop])


def capped_count(rows: Any, limit: int) -> int:
    """How many ``rows``, counted up to ``limit + 1`` only (a list is counted whole)."""
    if isinstance(rows, LateRows):
        rows = rows.queryset
    if isinstance(rows, QuerySet):
        # No ORDER BY, so the database may stop at the limit without sorting anything.
        return rows.order_by()[: limit + 1].count()
    return len(rows)


class OpenPage(Page):
    """A page of a list whose length is not known: whether another follows is what
    reading one row more than the page said."""

    def __init__(
        self, object_list: Sequence, number: int, paginator: Paginator, *, has_next: bool
    ) -> None:
        super().__init__(object_list, number, paginator)
        self._has_next = has_next

    def has_next(self) -> bool:
        return self._has_next

    def end_index(self) -> int:
        return self.start_index() + len(self.object_list) - 1

    @property
    def pages_known(self) -> int:
        """How many pages are known to exist: all of them on the last page; else this
        one and the next, or the count's pages when it knows of more."""
        if not self._has_next:
            return self.number
        return max(self.number + 1, self.paginator.num_pages)


class CappedPaginator(Paginator):
    """Django's Paginator with a count capped at ``count_limit`` (by default the setting
    `AGENTDOCS_PAGINATION_COUNT_LIMIT`).

    At or below the limit it is Django's. Above it: `count` is the limit and
    `count_exact` False; `num_pages` is the pages known to hold rows (the limit and one
    row more); any page number is read as an offset, a page without rows is EmptyPage;
    a page's `has_next` comes from the row read past it.
    """

    def __init__(
        self,
        object_list: Any,
        per_page: int,
        orphans: int = 0,
        allow_empty_first_page: bool = True,
        *,
        count_limit: int | None = None,
    ) -> None:
        super().__init__(object_list, per_page, orphans, allow_empty_first_page)
        self.count_limit = (
            settings.AGENTDOCS_PAGINATION_COUNT_LIMIT if count_limit is None else count_limit
        )

    @cached_property
    def _capped_count(self) -> int:
        return capped_count(self.object_list, self.count_limit)

    @cached_property
    def count_exact(self) -> bool:
        return self._capped_count <= self.count_limit

    @cached_property
    def count(self) -> int:
        return min(self._capped_count, self.count_limit)

    @cached_property
    def num_pages(self) -> int:
        if self.count_exact:
            return super().num_pages
        # At least the limit and one row exist.
        return math.ceil((self.count + 1) / self.per_page)

    def validate_number(self, number: Any) -> int:
        try:
            return super().validate_number(number)
        except EmptyPage:
            # A number past the known pages may still hold rows when the count is a bound.
            if self.count_exact or int(number) < 1:
                raise
            return int(number)

    def page(self, number: Any) -> Page:
        number = self.validate_number(number)
        if self.count_exact:
            return super().page(number)
        bottom = (number - 1) * self.per_page
        rows = list(self.object_list[bottom : bottom + self.per_page + 1])
        if not rows:
            raise EmptyPage(self.error_messages["no_results"])
        return OpenPage(rows[: self.per_page], number, self, has_next=len(rows) > self.per_page)

    def get_page(self, number: Any) -> Page:
        """As Django's (no number, or a bad one: the first page; past the end: the last),
        where the last page of an inexact count is the last one known to hold rows."""
        try:
            return super().get_page(number)
        except EmptyPage:
            return self.page(self.num_pages)
