// A small arithmetic expression language:
//   numbers, variables, + - * / % ^ (right-associative), unary minus, parentheses,
//   and calls to a fixed set of functions: abs, sqrt, min, max, round.
// evaluate(source, variables) tokenizes, parses to an AST and folds it to a number.

export class ExprError extends Error {
  constructor(message, position) {
    super(`${message} at position ${position}`);
    this.name = 'ExprError';
    this.position = position;
  }
}

const FUNCTIONS = {
  abs: { arity: [1, 1], fn: Math.abs },
  sqrt: { arity: [1, 1], fn: Math.sqrt },
  round: { arity: [1, 1], fn: Math.round },
  min: { arity: [1, Infinity], fn: Math.min },
  max: { arity: [1, Infinity], fn: Math.max },
};

const BINARY = {
  '+': { precedence: 1, right: false, apply: (a, b) => a + b },
  '-': { precedence: 1, right: false, apply: (a, b) => a - b },
  '*': { precedence: 2, right: false, apply: (a, b) => a * b },
  '/': { precedence: 2, right: false, apply: (a, b) => a / b },
  '%': { precedence: 2, right: false, apply: (a, b) => a % b },
  '^': { precedence: 4, right: true, apply: (a, b) => a ** b },
};

const UNARY_PRECEDENCE = 3;

// ---------------------------------------------------------------------------------------------
// Tokenizer

const NUMBER = /\d+(?:\.\d*)?|\.\d+/y;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const WHITESPACE = /\s+/y;
const PUNCT = '+-*/%^(),';

export function tokenize(source) {
  const tokens = [];
  let pos = 0;
  const at = (pattern) => {
    pattern.lastIndex = pos;
    const match = pattern.exec(source);
    return match ? match[0] : null;
  };
  while (pos < source.length) {
    const space = at(WHITESPACE);
    if (space) {
      pos += space.length;
      continue;
    }
    const number = at(NUMBER);
    if (number) {
      tokens.push({ type: 'number', value: Number(number), pos });
      pos += number.length;
      continue;
    }
    const ident = at(IDENT);
    if (ident) {
      tokens.push({ type: 'ident', value: ident, pos });
      pos += ident.length;
      continue;
    }
    const ch = source[pos];
    if (PUNCT.includes(ch)) {
      tokens.push({ type: 'punct', value: ch, pos });
      pos += 1;
      continue;
    }
    throw new ExprError(`unexpected character '${ch}'`, pos);
  }
  tokens.push({ type: 'end', value: null, pos });
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Parser (precedence climbing)

class Parser {
  constructor(tokens) {
    this.tokens = tokens;
    this.index = 0;
  }

  peek() {
    return this.tokens[this.index];
  }

  next() {
    return this.tokens[this.index++];
  }

  expect(value) {
    const token = this.next();
    if (token.value !== value) {
      throw new ExprError(`expected '${value}'`, token.pos);
    }
    return token;
  }

  parseExpression(minPrecedence = 0) {
    let left = this.parseUnary();
    for (;;) {
      const token = this.peek();
      const op = token.type === 'punct' ? BINARY[token.value] : undefined;
      if (!op || op.precedence < minPrecedence) {
        return left;
      }
      this.next();
      const right = this.parseExpression(op.right ? op.precedence : op.precedence + 1);
      left = { type: 'binary', op: token.value, left, right, pos: token.pos };
    }
  }

  parseUnary() {
    const token = this.peek();
    if (token.type === 'punct' && token.value === '-') {
      this.next();
      const operand = this.parseExpression(UNARY_PRECEDENCE);
      return { type: 'negate', operand, pos: token.pos };
    }
    return this.parsePrimary();
  }

  parsePrimary() {
    const token = this.next();
    if (token.type === 'number') {
      return { type: 'number', value: token.value, pos: token.pos };
    }
    if (token.type === 'ident') {
      if (this.peek().value === '(') {
        return this.parseCall(token);
      }
      return { type: 'variable', name: token.value, pos: token.pos };
    }
    if (token.value === '(') {
      const inner = this.parseExpression();
      this.expect(')');
      return inner;
    }
    throw new ExprError(token.type === 'end' ? 'unexpected end of input' : `unexpected '${token.value}'`, token.pos);
  }

  parseCall(nameToken) {
    this.expect('(');
    const args = [];
    if (this.peek().value !== ')') {
      args.push(this.parseExpression());
      while (this.peek().value === ',') {
        this.next();
        args.push(this.parseExpression());
      }
    }
    this.expect(')');
    return { type: 'call', name: nameToken.value, args, pos: nameToken.pos };
  }
}

export function parse(source) {
  const parser = new Parser(tokenize(source));
  const ast = parser.parseExpression();
  const rest = parser.peek();
  if (rest.type !== 'end') {
    throw new ExprError(`unexpected '${rest.value}'`, rest.pos);
  }
  return ast;
}

// ---------------------------------------------------------------------------------------------
// Evaluator

function evaluateNode(node, variables) {
  switch (node.type) {
    case 'number':
      return node.value;
    case 'variable':
      if (!Object.hasOwn(variables, node.name)) {
        throw new ExprError(`unknown variable '${node.name}'`, node.pos);
      }
      return variables[node.name];
    case 'negate':
      return -evaluateNode(node.operand, variables);
    case 'binary': {
      const left = evaluateNode(node.left, variables);
      const right = evaluateNode(node.right, variables);
      if ((node.op === '/' || node.op === '%') && right === 0) {
        throw new ExprError('division by zero', node.pos);
      }
      return BINARY[node.op].apply(left, right);
    }
    case 'call': {
      const spec = FUNCTIONS[node.name];
      if (!spec) {
        throw new ExprError(`unknown function '${node.name}'`, node.pos);
      }
      const [least, most] = spec.arity;
      if (node.args.length < least || node.args.length > most) {
        throw new ExprError(`wrong number of arguments to ${node.name}`, node.pos);
      }
      return spec.fn(...node.args.map((arg) => evaluateNode(arg, variables)));
    }
    default:
      throw new Error(`unknown node type ${node.type}`);
  }
}

export function evaluate(source, variables = {}) {
  return evaluateNode(parse(source), variables);
}
