'use strict';

// Dense matrices as arrays of rows.

function shape(m) {
  return [m.length, m.length === 0 ? 0 : m[0].length];
}

function zeros(rows, cols) {
  return Array.from({ length: rows }, () => new Array(cols).fill(0));
}

function identity(n) {
  const m = zeros(n, n);
  for (let i = 0; i < n; i++) m[i][i] = 1;
  return m;
}

function transpose(m) {
  const [rows, cols] = shape(m);
  const t = zeros(cols, rows);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) t[j][i] = m[i][j];
  }
  return t;
}

function add(a, b) {
  const [rows, cols] = shape(a);
  const [rowsB, colsB] = shape(b);
  if (rows !== rowsB || cols !== colsB) {
    throw new Error(`cannot add ${rows}x${cols} and ${rowsB}x${colsB}`);
  }
  return a.map((row, i) => row.map((value, j) => value + b[i][j]));
}

function multiply(a, b) {
  const [rows, inner] = shape(a);
  const [innerB, cols] = shape(b);
  if (inner !== innerB) {
    throw new Error(`cannot multiply ${rows}x${inner} by ${innerB}x${cols}`);
  }
  const out = zeros(rows, cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let sum = 0;
      for (let k = 0; k < inner; k++) sum += a[i][k] * b[k][j];
      out[i][j] = sum;
    }
  }
  return out;
}

function power(m, exponent) {
  const [rows, cols] = shape(m);
  if (rows !== cols) throw new Error('only square matrices have powers');
  let result = identity(rows);
  for (let e = 0; e < exponent; e++) result = multiply(result, m);
  return result;
}

module.exports = { shape, zeros, identity, transpose, add, multiply, power };
