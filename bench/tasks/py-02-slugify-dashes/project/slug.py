"""Turn titles into URL slugs."""

import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9-]+")
_DASHES = re.compile(r"-")


def slugify(title, max_length=60):
    """Return a lowercase ASCII slug for `title`, words joined by single dashes."""
    text = unicodedata.normalize("NFKD", title)
    text = text.encode("ascii", "ignore").decode("ascii").lower()
    text = _NON_WORD.sub("-", text)
    text = _DASHES.sub("-", text).strip("-")
    if len(text) > max_length:
        text = text[:max_length].rstrip("-")
    return text
