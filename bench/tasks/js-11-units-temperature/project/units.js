// Convert between units of the same dimension. Each unit is a factor to the dimension's base
// unit (metre, kilogram, second).

const UNITS = {
  length: { m: 1, km: 1000, cm: 0.01, mm: 0.001, in: 0.0254, ft: 0.3048, mi: 1609.344 },
  mass: { kg: 1, g: 0.001, lb: 0.45359237, oz: 0.028349523125 },
  time: { s: 1, min: 60, h: 3600, d: 86400 },
};

export function dimensionOf(unit) {
  for (const [dimension, table] of Object.entries(UNITS)) {
    if (Object.hasOwn(table, unit)) {
      return dimension;
    }
  }
  throw new Error(`unknown unit '${unit}'`);
}

export function convert(value, from, to) {
  const dimension = dimensionOf(from);
  if (dimensionOf(to) !== dimension) {
    throw new Error(`cannot convert ${from} (${dimension}) to ${to} (${dimensionOf(to)})`);
  }
  const table = UNITS[dimension];
  return (value * table[from]) / table[to];
}

export function format(value, unit, digits = 2) {
  return `${Number(value.toFixed(digits))} ${unit}`;
}
