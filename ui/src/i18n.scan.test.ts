import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Every word the UI shows comes from the catalogues in i18n.ts: a JSX text node, or a literal in
// a JSX expression or in a placeholder / title / aria-label, with Latin letters is English that
// escaped translation. Not prose: key names on <kbd>, brand and protocol names, codes.
const ALLOWED = new Set(['papayu', 'ok', 'v']);
const PROSE_ATTRS = new Set(['placeholder', 'title', 'aria-label']);
const KEY_TAKERS = new Set(['field', 'text', 'set']);
const TRANSLATORS = new Set(['t', 'tr', 'maybe', 'tn']);

function tsxFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsxFiles(join(dir, e.name)) : e.name.endsWith('.tsx') ? [join(dir, e.name)] : [],
  );
}

// Code, not prose: a JSON example, a path, URL, file or model name (one word with `/ . _ * :` or a
// digit), an environment variable's NAME.
const code = (s: string) => s.startsWith('{"') || /^\S*[/._*:\d]\S*$/.test(s) || /^[A-Z][A-Z0-9_]*$/.test(s);
const latin = (s: string) => /[A-Za-z]/.test(s) && !ALLOWED.has(s.trim()) && !code(s.trim());

/** Whether a literal is a translator's key or a value compared against, not shown text. */
function notShown(node: ts.Node): boolean {
  let p = node.parent;
  let arg: ts.Node = node;
  while (ts.isConditionalExpression(p) || ts.isParenthesizedExpression(p) || ts.isAsExpression(p)) [arg, p] = [p, p.parent];
  if (ts.isCallExpression(p) && ts.isIdentifier(p.expression) && TRANSLATORS.has(p.expression.text)) return true;
  // A form field's name (`field('model', …)`), not its label.
  if (ts.isCallExpression(p) && ts.isIdentifier(p.expression) && KEY_TAKERS.has(p.expression.text) && p.arguments[0] === arg) return true;
  p = node.parent;
  if (ts.isBinaryExpression(p) && [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(p.operatorToken.kind)) return true;
  if (ts.isCallExpression(p) && ts.isPropertyAccessExpression(p.expression) && ['replace', 'split', 'join', 'stringify'].includes(p.expression.name.text)) return true;
  if (ts.isElementAccessExpression(p) || ts.isCaseClause(p)) return true;
  return false;
}

/** Text inside <code> or <kbd> is a command, a path or a key, not prose. */
function inCode(n: ts.JsxText): boolean {
  const el = n.parent;
  return ts.isJsxElement(el) && ['code', 'kbd'].includes(el.openingElement.tagName.getText());
}

/** The untranslated English in one file, as `line: text`. */
export function untranslated(file: string, text = readFileSync(file, 'utf8')): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const found: string[] = [];
  const report = (n: ts.Node, text: string) => found.push(`${src.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${text.trim()}`);
  // Literals inside `{…}` children or prose attributes are shown unless they are keys or compared.
  const literals = (n: ts.Node) => {
    if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && latin(n.text) && !notShown(n)) report(n, n.text);
    else if (ts.isTemplateExpression(n) && !notShown(n)) {
      for (const part of [n.head, ...n.templateSpans.map((s) => s.literal)]) if (latin(part.text)) report(n, part.text);
    }
    if (ts.isJsxElement(n) || ts.isJsxSelfClosingElement(n) || ts.isJsxFragment(n)) return;
    n.forEachChild(literals);
  };
  const visit = (n: ts.Node) => {
    if (ts.isJsxText(n) && latin(n.text) && !inCode(n)) report(n, n.text);
    if (ts.isJsxExpression(n) && n.expression && !ts.isJsxAttribute(n.parent) && !ts.isJsxSpreadAttribute(n.parent)) literals(n.expression);
    if (ts.isJsxAttribute(n) && PROSE_ATTRS.has(n.name.getText(src)) && n.initializer) {
      if (ts.isStringLiteral(n.initializer) && latin(n.initializer.text)) report(n, n.initializer.text);
      else if (ts.isJsxExpression(n.initializer) && n.initializer.expression) literals(n.initializer.expression);
    }
    n.forEachChild(visit);
  };
  visit(src);
  return found;
}

describe('every visible string goes through i18n', () => {
  const root = join(__dirname);
  for (const file of tsxFiles(root)) {
    const name = file.slice(root.length + 1);
    it(name, () => {
      expect(untranslated(file)).toEqual([]);
    });
  }

  it('catches an English label (the scan can fail)', () => {
    const probe = `<p title="Hello" aria-label={t('a.b')}>Hi <kbd>Esc</kbd> <code>papayu config</code> {ok ? 'Done' : t('c.d')} {x === 'same' ? 1 : 2} {'PAPAYU_X'}</p>`;
    expect(untranslated('probe.tsx', probe)).toEqual(['1: Hello', '1: Hi', '1: Done']);
  });
});
