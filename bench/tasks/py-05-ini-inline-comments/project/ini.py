"""A small INI reader and writer.

Supports sections, `key = value` and `key: value` pairs, full-line comments (`#` or `;`),
inline comments (a `;` or `#` preceded by whitespace), quoted values, indented continuation
lines, a [DEFAULT] section whose keys every section inherits, and `${section:key}` or `${key}`
interpolation.
"""

import re

DEFAULT_SECTION = "DEFAULT"

_SECTION = re.compile(r"^\[(?P<name>[^\]]+)\]\s*$")
_PAIR = re.compile(r"^(?P<key>[^=:\s][^=:]*?)\s*[=:]\s*(?P<value>.*)$")
_INLINE_COMMENT = re.compile(r"\s#.*$")
_REFERENCE = re.compile(r"\$\{(?:(?P<section>[^:}]+):)?(?P<key>[^}]+)\}")
_TRUE = {"1", "yes", "true", "on"}
_FALSE = {"0", "no", "false", "off"}
_MAX_DEPTH = 10


class IniError(ValueError):
    """A syntax or lookup error, with the line number when there is one."""

    def __init__(self, message, line=None):
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class Section:
    """The keys of one section, with fallback to the DEFAULT section."""

    def __init__(self, document, name):
        self._document = document
        self.name = name
        self._values = {}

    def __contains__(self, key):
        key = key.lower()
        return key in self._values or key in self._document.defaults()

    def __getitem__(self, key):
        return self.get(key)

    def keys(self):
        merged = dict(self._document.defaults())
        merged.update(self._values)
        return list(merged)

    def raw(self, key):
        key = key.lower()
        if key in self._values:
            return self._values[key]
        defaults = self._document.defaults()
        if key in defaults:
            return defaults[key]
        raise IniError(f"no key {key!r} in section [{self.name}]")

    def get(self, key, fallback=None):
        if fallback is not None and key not in self:
            return fallback
        return self._document.interpolate(self.raw(key), self.name)

    def getint(self, key, fallback=None):
        if fallback is not None and key not in self:
            return fallback
        value = self.get(key)
        try:
            return int(value)
        except ValueError:
            raise IniError(f"[{self.name}] {key} is not an integer: {value!r}") from None

    def getbool(self, key, fallback=None):
        if fallback is not None and key not in self:
            return fallback
        value = self.get(key).lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise IniError(f"[{self.name}] {key} is not a boolean: {value!r}")

    def getlist(self, key, separator=","):
        return [item.strip() for item in self.get(key).split(separator) if item.strip()]

    def set(self, key, value):
        self._values[key.lower()] = str(value)


def _strip_inline_comment(value):
    if value[:1] in "\"'" and len(value) > 1:
        quote = value[0]
        end = value.find(quote, 1)
        if end != -1:
            return value[: end + 1]
    return _INLINE_COMMENT.sub("", value).rstrip()


def _unquote(value):
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


class Document:
    """A parsed INI file."""

    def __init__(self):
        self._sections = {DEFAULT_SECTION: Section(self, DEFAULT_SECTION)}

    def defaults(self):
        return self._sections[DEFAULT_SECTION]._values

    def sections(self):
        return [name for name in self._sections if name != DEFAULT_SECTION]

    def __contains__(self, name):
        return name in self._sections

    def __getitem__(self, name):
        try:
            return self._sections[name]
        except KeyError:
            raise IniError(f"no section [{name}]") from None

    def add_section(self, name):
        if name in self._sections:
            raise IniError(f"duplicate section [{name}]")
        self._sections[name] = Section(self, name)
        return self._sections[name]

    def interpolate(self, value, section, depth=0):
        if depth > _MAX_DEPTH:
            raise IniError(f"interpolation too deep in [{section}]")

        def replace(match):
            target = match.group("section") or section
            raw = self[target].raw(match.group("key"))
            return self.interpolate(raw, target, depth + 1)

        return _REFERENCE.sub(replace, value)

    def dump(self):
        out = []
        for name, section in self._sections.items():
            if name == DEFAULT_SECTION and not section._values:
                continue
            out.append(f"[{name}]")
            for key, value in section._values.items():
                out.append(f"{key} = {value}")
            out.append("")
        return "\n".join(out)


def parse(text):
    """Parse INI text into a Document."""
    document = Document()
    current = None
    last_key = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if line[0].isspace() and current is not None and last_key is not None:
            previous = current._values[last_key]
            current._values[last_key] = f"{previous}\n{_strip_inline_comment(stripped)}"
            continue
        match = _SECTION.match(stripped)
        if match:
            name = match.group("name").strip()
            current = document[name] if name == DEFAULT_SECTION else document.add_section(name)
            last_key = None
            continue
        match = _PAIR.match(stripped)
        if not match:
            raise IniError(f"expected `key = value` or [section], got {stripped!r}", number)
        if current is None:
            raise IniError("key outside of any section", number)
        last_key = match.group("key").strip().lower()
        value = _unquote(_strip_inline_comment(match.group("value")))
        current._values[last_key] = value
    return document


def load(path):
    """Parse the INI file at `path`."""
    with open(path, encoding="utf-8") as handle:
        return parse(handle.read())
