"""A minimal CSV reader producing dicts keyed by the header row."""


class CsvError(ValueError):
    pass


def parse_line(line, delimiter=","):
    """Split one CSV line into fields; a field may be double-quoted, with "" for a quote."""
    fields = []
    field = []
    in_quotes = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_quotes:
            if ch == '"' and line[i + 1 : i + 2] == '"':
                field.append('"')
                i += 1
            elif ch == '"':
                in_quotes = False
            else:
                field.append(ch)
        elif ch == '"' and not field:
            in_quotes = True
        elif ch == delimiter:
            fields.append("".join(field))
            field = []
        else:
            field.append(ch)
        i += 1
    if in_quotes:
        raise CsvError(f"unterminated quoted field in {line!r}")
    fields.append("".join(field))
    return fields


def read_rows(text, delimiter=","):
    """Yield one dict per data row; blank lines are skipped."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return
    header = [name.strip() for name in parse_line(lines[0], delimiter)]
    for number, line in enumerate(lines[1:], start=2):
        fields = parse_line(line, delimiter)
        if len(fields) != len(header):
            raise CsvError(f"line {number}: expected {len(header)} fields, got {len(fields)}")
        yield dict(zip(header, fields))


def column(text, name, delimiter=","):
    """All values of one column."""
    return [row[name] for row in read_rows(text, delimiter)]
