"""Hand-written SQL, in one room.

Only the hottest reads are written by hand, where the ORM would take longer to
compile the statement than the database takes to run it: the access check with
the API token (`access`) and the reads of a Memory Block render (`render_reads`).
Each public function here has a test in `tests/sql/` that compares its result
with the same read written with the ORM, on SQLite and on PostgreSQL.
"""
