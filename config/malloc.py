"""glibc's malloc, tuned for a server that builds large answers.

glibc serves a large allocation with a fresh `mmap` and hands a large freed block
back to the system (a threshold it raises by itself only in simple patterns). A
worker answering a render of a project with 10,000 `.AGENTS/` documents builds a
1.3 MB answer on every turn: measured in-process, each such request faulted in
about 305 fresh pages, and took 2.5 to 3.4 ms where the small tenant's took 1.5;
with the thresholds below, 7 faults and 1.8 to 2.0 ms (`bench/README.md`). Through
gunicorn the render of that project went from 1.65 to 1.69 times the small
tenant's time to 1.33 to 1.35.

`tune()` raises the mmap threshold to 16 MiB and the trim threshold to 32 MiB, so
buffers up to 16 MiB come from the heap and are reused there; a worker may keep up to
32 MiB of freed memory for its next answers. It runs where the app is served
(`config/wsgi.py`, `config/asgi.py`), before the app is loaded, and only on glibc;
`AGENTDOCS_MALLOC_TUNING=0` leaves glibc's defaults.
"""

from __future__ import annotations

import ctypes
import sys

from config.env import env_bool

# mallopt(3) parameters, from glibc's <malloc.h>.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 16 * 1024 * 1024
TRIM_THRESHOLD = 32 * 1024 * 1024


def glibc() -> ctypes.CDLL | None:
    """This process's C library when it is glibc (whose `mallopt` does something; musl's
    does nothing), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (only glibc has it)
    except (OSError, AttributeError):
        return None
    return libc


def tune() -> bool:
    """Raise glibc's mmap and trim thresholds for this process (and the processes it
    forks); False where it did nothing (turned off, not Linux, not glibc)."""
    if not env_bool("AGENTDOCS_MALLOC_TUNING", True):
        return False
    libc = glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
