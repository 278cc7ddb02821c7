from __future__ import annotations

from rest_framework import exceptions
from rest_framework.pagination import PageNumberPagination

from agentdocs.core.errors import NotFound


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def paginate_queryset(self, queryset, request, view=None):
        try:
            return super().paginate_queryset(queryset, request, view)
        except exceptions.NotFound:
            raise NotFound(
                "No such page: `page` is a number from 1 to the last page.", field="page"
            ) from None
