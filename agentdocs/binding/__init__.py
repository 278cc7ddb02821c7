"""Binding records as plain Python: the manifest, the exception classification,
canonical JSON, and comparing records.

Nothing here touches Django or the database: the services read what they need
first and hand plain data to these functions, so the command-line client and
the tests use them directly.
"""
