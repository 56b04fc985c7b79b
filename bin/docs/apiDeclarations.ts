import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { packageRoot } from '../../runtime/model/packageRoot.js';

/**
 * The public declarations of a source file as an application sees them, with their doc
 * comments: interfaces and type aliases whole, functions and class methods as signatures
 * (bodies left out, private members and the constructor too). Read with TypeScript's own parser,
 * so the reference shows exactly what the code declares.
 */
export function apiDeclarations(file: string, names: readonly string[]): string {
  const path = join(packageRoot, file);
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  const printed = new Map<string, string>();
  for (const statement of source.statements) {
    const name = declaredName(statement);
    if (!name || !names.includes(name)) continue;
    printed.set(name, declarationText(source, statement));
  }
  const missing = names.filter((name) => !printed.has(name));
  if (missing.length > 0) throw new Error(`${file} declares no ${missing.join(', ')}`);
  return names.map((name) => printed.get(name)).join('\n\n');
}

function declaredName(statement: ts.Statement): string | undefined {
  if (
    ts.isInterfaceDeclaration(statement) ||
    ts.isTypeAliasDeclaration(statement) ||
    ts.isClassDeclaration(statement) ||
    ts.isFunctionDeclaration(statement)
  )
    return statement.name?.text;
  return undefined;
}

function declarationText(source: ts.SourceFile, statement: ts.Statement): string {
  const doc = leadingDoc(source, statement);
  if (ts.isFunctionDeclaration(statement)) return `${doc}${signature(source, statement)};`;
  if (!ts.isClassDeclaration(statement)) return `${doc}${statement.getText(source)}`;
  const members: string[] = [];
  for (const member of statement.members) {
    if (!ts.isMethodDeclaration(member) && !ts.isPropertyDeclaration(member)) continue;
    const modifiers = ts.getCombinedModifierFlags(member);
    if (modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
    if (member.name && ts.isPrivateIdentifier(member.name)) continue;
    const text = ts.isMethodDeclaration(member) ? `${signature(source, member)};` : member.getText(source);
    members.push(indent(`${leadingDoc(source, member)}${text}`));
  }
  const heading = statement
    .getText(source)
    .slice(0, statement.members.pos - statement.getStart(source))
    .trimEnd();
  return `${doc}${heading}\n${members.join('\n')}\n}`;
}

/** A function or method up to its body, without `async` (the return type says Promise). */
function signature(source: ts.SourceFile, node: ts.FunctionDeclaration | ts.MethodDeclaration): string {
  const start = node.getStart(source);
  const end = node.body ? node.body.getStart(source) : node.getEnd();
  return source.text
    .slice(start, end)
    .trimEnd()
    .replace(/^(export\s+)?async\s+/, '$1')
    .replace(/\s*\{$/, '');
}

function leadingDoc(source: ts.SourceFile, node: ts.Node): string {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [];
  const docs = ranges.filter((range) => source.text.slice(range.pos, range.pos + 3) === '/**');
  if (docs.length === 0) return '';
  const last = docs[docs.length - 1];
  const text = source.text.slice(last.pos, last.end);
  // Re-indent a member's comment from its column to none; indent() puts it back in the class.
  return `${text.replace(/\n\s*\*/g, '\n *')}\n`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line ? `  ${line}` : line))
    .join('\n');
}
