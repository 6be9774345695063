"""Convert between integers and Roman numerals (1..3999)."""

_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}

_TABLE = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"),
    (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
    (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]


def to_roman(number):
    """Return the Roman numeral for an integer between 1 and 3999."""
    if not 1 <= number <= 3999:
        raise ValueError(f"{number} is out of range (1..3999)")
    parts = []
    for value, numeral in _TABLE:
        count, number = divmod(number, value)
        parts.append(numeral * count)
    return "".join(parts)


def from_roman(numeral):
    """Return the integer value of a Roman numeral such as 'MCMXCIV'."""
    if not numeral or any(ch not in _VALUES for ch in numeral.upper()):
        raise ValueError(f"not a Roman numeral: {numeral!r}")
    digits = [_VALUES[ch] for ch in numeral.upper()]
    total = 0
    for i, value in enumerate(digits):
        following = digits[i + 1] if i + 1 < len(digits) else 0
        if value < following:
            total -= value
        else:
            total += value
    return total
