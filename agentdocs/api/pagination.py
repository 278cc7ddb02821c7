"""The API's paged answers: `count` (exact up to `AGENTDOCS_PAGINATION_COUNT_LIMIT`,
then a lower bound, which `count_exact` says), `next`, `previous`, `results`.

`?page=` that names no page (`abc`, 0, past the end) is 404 naming `page`; `?page_size=`
that is not a whole number from 1 (`null`, `abc`, `0`) is 400 naming `page_size`, and
one over `max_page_size` is read as it (DRF ignored a bad size and answered 50 rows)."""

from __future__ import annotations

import re
from typing import Any, cast

from rest_framework import exceptions
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.paging import CappedPaginator


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
    django_paginator_class = CappedPaginator

    def paginate_queryset(self, queryset, request, view=None):
        try:
            return super().paginate_queryset(queryset, request, view)
        except exceptions.NotFound:
            raise NotFound(
                "No such page: `page` is a number from 1 to the last page.", field="page"
            ) from None

    def get_page_size(self, request) -> int:
        given = request.query_params.get(self.page_size_query_param)
        if not given:  # as an empty `?page=` is the first page
            return self.page_size
        # ASCII digits only: int() also reads " 5", "+5", "5_0" and other scripts' digits.
        significant = given.lstrip("0")
        if not re.fullmatch(r"[0-9]+", given) or not significant:
            raise InvalidInput(
                f"`page_size` is a whole number from 1 (at most {self.max_page_size} are "
                "answered).",
                field=self.page_size_query_param,
            )
        if len(significant) > len(str(self.max_page_size)):
            return self.max_page_size
        return min(int(significant), self.max_page_size)

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["description"] = (
                    f"Rows per page: a whole number from 1 (default {self.page_size}; more "
                    f"than {self.max_page_size} is read as {self.max_page_size}). Anything "
                    "else (`null`, `abc`, `0`) is a 400 naming `page_size`."
                )
                parameter["schema"] = {"type": "integer", "minimum": 1}
            elif parameter["name"] == self.page_query_param:
                parameter["description"] = (
                    "The page, from 1 (or `last` while `count_exact`); one that names no "
                    "page is a 404 naming `page`."
                )
        return parameters

    def get_page_number(self, request, paginator):
        asks_for_last = request.query_params.get(self.page_query_param) in self.last_page_strings
        if asks_for_last and not paginator.count_exact:
            raise NotFound(
                f"The last page is not known past {paginator.count} rows: the list holds "
                "more, which are not counted. Follow `next`, or ask for a page by number.",
                field="page",
            )
        return super().get_page_number(request, paginator)

    def get_paginated_response(self, data: Any) -> Response:
        assert self.page is not None, "paginate_queryset comes first"
        paginator = cast(CappedPaginator, self.page.paginator)
        return Response(
            {
                "count": paginator.count,
                "count_exact": paginator.count_exact,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        paged = super().get_paginated_response_schema(schema)
        properties = paged["properties"]
        properties["count"]["description"] = (
            "How many rows the list holds, counted up to a limit (10,000 by default); "
            "past it, the limit, and `count_exact` is false."
        )
        count_exact = {
            "type": "boolean",
            "description": "False when the list holds more rows than `count`: follow "
            "`next` to reach them; `?page=last` is then refused.",
        }
        # In the order of the answer's keys.
        paged["properties"] = {"count": properties.pop("count"), "count_exact": count_exact}
        paged["properties"].update(properties)
        paged["required"] = ["count", "count_exact", "results"]
        return paged
