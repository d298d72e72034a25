// The repository's style, checked by `npm test` and fixed by `node scripts/style.mjs --fix`.
//
// What it holds every tracked source file to (.editorconfig says the same to editors):
// - lines of at most MAX_LINE characters, LF line ends, no trailing whitespace, a final newline; in TypeScript and
//   JavaScript a line may run past MAX_LINE only by the length of one string, template or regular expression literal
//   on it (a message or pattern reads best whole; ESLint's max-len ignores such lines the same way);
// - TypeScript and JavaScript indented with spaces, never tabs;
// - kebab-case file names for TypeScript, JavaScript, CSS and HTML (C fixtures keep C's snake_case, the name of
//   the program each one builds);
// - no `any` in TypeScript outside tests: a boundary says what crosses it (`unknown` and a check, or a type).
//
// --fix rewrites what it can without changing meaning: it strips trailing whitespace, adds the final newline and
// breaks a TypeScript/JavaScript line that is too long at its outermost bracketed list, operator chain or
// one-line block that lies wholly on the line (one element per line, as a formatter would), repeating until the
// line fits or nothing on it can break. Lines it cannot break (a long string, a regular expression) are reported.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const MAX_LINE = 160;
const INDENT = '  ';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const CODE = /\.(ts|mts|cts|mjs|cjs|js|c|cc|h|css|html)$/;
const SCRIPT = /\.(ts|mts|cts|mjs|cjs|js)$/;
const NAMED = /\.(ts|mts|cts|mjs|cjs|js|css|html)$/;
const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+)*$/;

function trackedFiles() {
  return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f && CODE.test(f));
}

/** Every style problem in one file's text, as `file:line: what`. */
export function problems(file, text) {
  const out = [];
  const lines = text.split('\n');
  if (text.length > 0 && !text.endsWith('\n')) out.push(`${file}:${lines.length}: no newline at the end of the file`);
  if (NAMED.test(file) && !KEBAB.test(path.basename(file))) out.push(`${file}:1: file name is not kebab-case`);
  const isTs = /\.(ts|mts|cts)$/.test(file);
  const isTest = /\.test\.ts$/.test(file) || file.startsWith('test/');
  const literals = SCRIPT.test(file) ? longestLiteralPerLine(file, text) : new Map();
  lines.forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    if (line.endsWith('\r')) out.push(`${at}: CRLF line end`);
    // A fixture's build line is one shell command the build runs as written.
    const buildLine = line.startsWith('// ringside-build:');
    if (!buildLine && line.length - (literals.get(i) ?? 0) > MAX_LINE) out.push(`${at}: ${line.length} characters (at most ${MAX_LINE})`);
    if (/[ \t]+\r?$/.test(line)) out.push(`${at}: trailing whitespace`);
    if (SCRIPT.test(file) && /^\t/.test(line)) out.push(`${at}: indented with a tab`);
  });
  if (isTs && !isTest) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (node.kind === ts.SyntaxKind.AnyKeyword) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        out.push(`${file}:${line + 1}: \`any\` (say what crosses: a type, or \`unknown\` and a check)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

/** For each line, the length of the longest string, template or regular expression literal that lies on it. */
function longestLiteralPerLine(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const longest = new Map();
  const kinds = new Set([
    ts.SyntaxKind.StringLiteral,
    ts.SyntaxKind.NoSubstitutionTemplateLiteral,
    ts.SyntaxKind.TemplateExpression,
    ts.SyntaxKind.RegularExpressionLiteral,
  ]);
  const visit = (node) => {
    if (kinds.has(node.kind)) {
      const start = node.getStart(source);
      const first = source.getLineAndCharacterOfPosition(start).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      if (first === last) longest.set(first, Math.max(longest.get(first) ?? 0, node.end - start));
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return longest;
}

// ---- fixing -------------------------------------------------------------------------------------------------

// A breakable group is one of: a bracketed list ({ start, end, pieces, separator, trailing }: start..end is the
// text between the brackets), an operator chain ({ chain }), a conditional or a union type; `span` orders them.

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

/** The groups that lie wholly on [lineStart, lineEnd), outermost first. */
function breakableGroups(source, text, lineStart, lineEnd) {
  const groups = [];
  const onLine = (start, end) => start >= lineStart && end <= lineEnd;
  const between = (a, b) => text.slice(a, b);
  // A list between two bracket tokens; refuses when anything but commas and spaces sits between elements, so no
  // comment is ever lost.
  const list = (node, elements, openPos, closeEnd, separator, trailing) => {
    if (elements.length === 0) return;
    const openEnd = openPos + 1;
    const closeStart = closeEnd - 1;
    const pieces = [];
    let cursor = openEnd;
    for (const element of elements) {
      const start = element.getStart(source);
      const gap = between(cursor, start).replace(/[\s,;]/g, '');
      if (gap !== '') return;
      pieces.push(text.slice(start, element.end));
      cursor = element.end;
    }
    if (between(cursor, closeStart).replace(/[\s,;]/g, '') !== '') return;
    // A lone object, array or function hugs its brackets, f({ ... }): its own brackets break instead.
    const hugs = [ts.SyntaxKind.ObjectLiteralExpression, ts.SyntaxKind.ArrayLiteralExpression, ts.SyntaxKind.ArrowFunction];
    if (elements.length === 1 && hugs.includes(elements[0].kind)) return;
    groups.push({ start: openEnd, end: closeStart, pieces, separator, trailing, span: closeEnd - openPos, node });
  };
  const visit = (node) => {
    const start = node.getStart(source);
    if (node.end < lineStart || start > lineEnd) return;
    // Code inside a template's ${...} stays on its line: broken, the string it builds is hard to read.
    if (node.kind === ts.SyntaxKind.TemplateExpression) return;
    if (onLine(start, node.end)) {
      const children = node.getChildren(source);
      const bracketed = (openKind, closeKind, elements, separator, trailing) => {
        const open = children.find((c) => c.kind === openKind);
        const close = [...children].reverse().find((c) => c.kind === closeKind);
        if (open && close) list(node, elements, open.getStart(source), close.end, separator, trailing);
      };
      switch (node.kind) {
        case ts.SyntaxKind.CallExpression:
        case ts.SyntaxKind.NewExpression:
          if (node.arguments) bracketed(ts.SyntaxKind.OpenParenToken, ts.SyntaxKind.CloseParenToken, node.arguments, ',', true);
          break;
        case ts.SyntaxKind.ArrayLiteralExpression:
          bracketed(ts.SyntaxKind.OpenBracketToken, ts.SyntaxKind.CloseBracketToken, node.elements, ',', true);
          break;
        case ts.SyntaxKind.ObjectLiteralExpression:
          bracketed(ts.SyntaxKind.OpenBraceToken, ts.SyntaxKind.CloseBraceToken, node.properties, ',', true);
          break;
        case ts.SyntaxKind.ObjectBindingPattern:
          bracketed(ts.SyntaxKind.OpenBraceToken, ts.SyntaxKind.CloseBraceToken, node.elements, ',', false);
          break;
        case ts.SyntaxKind.NamedImports:
        case ts.SyntaxKind.NamedExports:
          bracketed(ts.SyntaxKind.OpenBraceToken, ts.SyntaxKind.CloseBraceToken, node.elements, ',', true);
          break;
        case ts.SyntaxKind.TypeLiteral:
          bracketed(ts.SyntaxKind.OpenBraceToken, ts.SyntaxKind.CloseBraceToken, node.members, ';', true);
          break;
        case ts.SyntaxKind.Block:
          bracketed(ts.SyntaxKind.OpenBraceToken, ts.SyntaxKind.CloseBraceToken, node.statements, '', false);
          break;
        case ts.SyntaxKind.FunctionDeclaration:
        case ts.SyntaxKind.MethodDeclaration:
        case ts.SyntaxKind.ArrowFunction:
        case ts.SyntaxKind.FunctionExpression:
        case ts.SyntaxKind.Constructor:
        case ts.SyntaxKind.FunctionType:
        case ts.SyntaxKind.MethodSignature: {
          const hasRest = node.parameters.some((p) => p.dotDotDotToken);
          bracketed(ts.SyntaxKind.OpenParenToken, ts.SyntaxKind.CloseParenToken, node.parameters, ',', !hasRest);
          break;
        }
        case ts.SyntaxKind.BinaryExpression:
          chain(node);
          break;
        case ts.SyntaxKind.ConditionalExpression:
          groups.push({ conditional: node, span: node.end - start, node });
          break;
        case ts.SyntaxKind.UnionType:
          groups.push({ union: node, span: node.end - start, node });
          break;
        default:
          break;
      }
    }
    ts.forEachChild(node, visit);
  };
  // a && b && c (or ||, ??, +): the operands of the outermost chain of one operator, broken after each operator.
  const chain = (node) => {
    const op = node.operatorToken.kind;
    const chainable = [
      ts.SyntaxKind.AmpersandAmpersandToken,
      ts.SyntaxKind.BarBarToken,
      ts.SyntaxKind.QuestionQuestionToken,
      ts.SyntaxKind.PlusToken,
    ];
    if (!chainable.includes(op)) return;
    const parent = node.parent;
    if (parent && parent.kind === ts.SyntaxKind.BinaryExpression && parent.operatorToken.kind === op) return;
    const operands = [];
    const operators = new Set();
    const flatten = (n) => {
      if (n.kind === ts.SyntaxKind.BinaryExpression && n.operatorToken.kind === op) {
        flatten(n.left);
        operands.push(n.operatorToken);
        operators.add(n.operatorToken);
        flatten(n.right);
      } else operands.push(n);
    };
    flatten(node);
    groups.push({ chain: operands, operators, span: node.end - node.getStart(source), node });
  };
  visit(source);
  return groups.sort((a, b) => b.span - a.span);
}

/** The replacement for one group, given the indentation of the line it is on. */
function render(group, source, text, baseIndent) {
  const inner = baseIndent + INDENT;
  if (group.pieces) {
    const body = group.pieces
      .map((piece, i) => {
        if (group.separator === '') return inner + piece;
        const last = i === group.pieces.length - 1;
        return inner + piece.replace(/[;,]$/, '') + (last && !group.trailing ? '' : group.separator);
      })
      .join('\n');
    return { start: group.start, end: group.end, text: `\n${body}\n${baseIndent}` };
  }
  if (group.chain) {
    const parts = [];
    let current = '';
    for (const item of group.chain) {
      if (group.operators.has(item)) {
        current += ` ${item.getText(source)}`;
        parts.push(current);
        current = '';
      } else current = text.slice(item.getStart(source), item.end);
    }
    parts.push(current);
    const node = group.node;
    return { start: node.getStart(source), end: node.end, text: parts.join(`\n${inner}`) };
  }
  if (group.conditional) {
    const c = group.conditional;
    const slice = (n) => text.slice(n.getStart(source), n.end);
    return {
      start: c.getStart(source),
      end: c.end,
      text: `${slice(c.condition)}\n${inner}? ${slice(c.whenTrue)}\n${inner}: ${slice(c.whenFalse)}`,
    };
  }
  if (group.union) {
    const u = group.union;
    const types = u.types.map((t) => text.slice(t.getStart(source), t.end));
    return { start: u.getStart(source), end: u.end, text: types.join(`\n${inner}| `) };
  }
  return undefined;
}

/** One pass: breaks the first over-long line that can break. Returns the new text, or undefined when none can. */
function breakOneLine(file, text, skip) {
  const starts = lineStarts(text);
  const lines = text.split('\n');
  const literals = longestLiteralPerLine(file, text);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].length - (literals.get(i) ?? 0) <= MAX_LINE || skip.has(lines[i])) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
    const lineStart = starts[i];
    const lineEnd = lineStart + lines[i].length;
    const baseIndent = /^\s*/.exec(lines[i])[0];
    for (const group of breakableGroups(source, text, lineStart, lineEnd)) {
      const edit = render(group, source, text, baseIndent);
      if (!edit) continue;
      const next = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
      if (next === text) continue;
      // A break must keep the program the same: the same tokens, in the same order.
      if (!sameTokensIgnoringTrailingSeparators(file, text, next)) continue;
      return next;
    }
    skip.add(lines[i]);
  }
  return undefined;
}

function scriptKind(file) {
  return /\.(ts|mts|cts)$/.test(file) ? ts.ScriptKind.TS : ts.ScriptKind.JS;
}

// The program's tokens, read from its syntax tree so template literals count as the tokens they are.
function tokens(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const out = [];
  const walk = (node) => {
    const children = node.getChildren(source);
    if (children.length === 0) {
      if (node.kind !== ts.SyntaxKind.EndOfFileToken) out.push(node.getText(source));
      return;
    }
    for (const child of children) walk(child);
  };
  walk(source);
  return out;
}

// A trailing comma or separator added before a closing bracket is the only token difference a break may make.
function sameTokensIgnoringTrailingSeparators(file, before, after) {
  const strip = (list) => list.filter((t, i) => !((t === ',' || t === ';') && /^[)\]}]$/.test(list[i + 1] ?? '')));
  const a = strip(tokens(file, before));
  const b = strip(tokens(file, after));
  return a.length === b.length && a.every((t, i) => t === b[i]);
}

function fix(file, text) {
  let out = text.replace(/[ \t]+$/gm, '');
  if (out.length > 0 && !out.endsWith('\n')) out += '\n';
  if (SCRIPT.test(file)) {
    const skip = new Set();
    for (let guard = 0; guard < 10000; guard++) {
      const next = breakOneLine(file, out, skip);
      if (next === undefined) break;
      out = next;
    }
  }
  return out;
}

function main(argv) {
  const fixing = argv.includes('--fix');
  const only = argv.filter((a) => !a.startsWith('--'));
  const files = only.length > 0 ? only : trackedFiles();
  const found = [];
  for (const file of files) {
    const full = path.resolve(root, file);
    let text = readFileSync(full, 'utf8');
    if (fixing) {
      const fixed = fix(file, text);
      if (fixed !== text) {
        writeFileSync(full, fixed);
        text = fixed;
      }
    }
    found.push(...problems(file, text));
  }
  for (const p of found) console.log(p);
  if (found.length > 0) {
    console.log(`${found.length} style problem(s)${fixing ? ' left after --fix' : '; `node scripts/style.mjs --fix` fixes most'}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) main(process.argv.slice(2));
