"""Forms parse what the browser sends; the services decide what is allowed.

Validation here is only about shape (a number is a number, JSON is JSON). Rules
about paths, bodies, secrets, keys and recipes live in the services, whose
errors the views put back beside the field they name. One module per feature, named
as its views are (`agentdocs.web.views.<feature>`); the fields they share are
`fields`.
"""
