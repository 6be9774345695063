// Convert between units of the same dimension. Each unit is a factor to the dimension's base
// unit (metre, kilogram, second). Temperatures also need an offset, so they map to and from
// kelvin through functions instead.

const UNITS = {
  length: { m: 1, km: 1000, cm: 0.01, mm: 0.001, in: 0.0254, ft: 0.3048, mi: 1609.344 },
  mass: { kg: 1, g: 0.001, lb: 0.45359237, oz: 0.028349523125 },
  time: { s: 1, min: 60, h: 3600, d: 86400 },
};

const TEMPERATURES = {
  K: { toKelvin: (v) => v, fromKelvin: (k) => k },
  C: { toKelvin: (v) => v + 273.15, fromKelvin: (k) => k - 273.15 },
  F: { toKelvin: (v) => ((v - 32) * 5) / 9 + 273.15, fromKelvin: (k) => ((k - 273.15) * 9) / 5 + 32 },
};

export function dimensionOf(unit) {
  if (Object.hasOwn(TEMPERATURES, unit)) {
    return 'temperature';
  }
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
  if (dimension === 'temperature') {
    return TEMPERATURES[to].fromKelvin(TEMPERATURES[from].toKelvin(value));
  }
  const table = UNITS[dimension];
  return (value * table[from]) / table[to];
}

export function format(value, unit, digits = 2) {
  return `${Number(value.toFixed(digits))} ${unit}`;
}
