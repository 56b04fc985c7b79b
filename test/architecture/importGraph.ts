import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

/** Source files (not tests) of the given folders, by path relative to `root`. */
export function sourceFiles(root: string, folders: string[]): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts'))
        files.push(relative(root, path).split(sep).join('/'));
    }
  };
  for (const folder of folders) walk(join(root, folder));
  return files;
}

/** Source files (not tests) of the given folders, by path relative to `root`, with the files they import. */
export function importGraph(root: string, folders: string[]): Map<string, string[]> {
  const files = sourceFiles(root, folders);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  // `import x from`, `export ... from`, a bare `import '...'`, and `import('...')`.
  const specifier =
    /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const targets = new Set<string>();
    for (const match of text.matchAll(specifier)) {
      const spec = (match[1] ?? match[2] ?? match[3]).replace(/\.js$/, '');
      const base = normalize(join(dirname(file), spec))
        .split(sep)
        .join('/');
      const target = [`${base}.ts`, `${base}.tsx`].find((candidate) => known.has(candidate));
      if (target) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** Strongly connected components with more than one file (import cycles), each sorted. Tarjan's algorithm. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!));
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

/**
 * The graph between the folders of `under` (each file directly under it stands for itself, as a
 * folder of one): A -> B when a file of A imports one of B. Each arrow keeps one import that makes it.
 */
export function folderGraph(graph: Map<string, string[]>, under: string): Map<string, Map<string, string>> {
  const folderOf = (file: string) => {
    const rest = file.slice(under.length + 1).split('/');
    return rest.length > 1 ? `${rest[0]}/` : rest[0];
  };
  const folders = new Map<string, Map<string, string>>();
  for (const [from, targets] of graph) {
    if (!from.startsWith(`${under}/`)) continue;
    const source = folderOf(from);
    const arrows = folders.get(source) ?? new Map<string, string>();
    folders.set(source, arrows);
    for (const to of targets) {
      if (!to.startsWith(`${under}/`) || folderOf(to) === source) continue;
      if (!arrows.has(folderOf(to))) arrows.set(folderOf(to), `${from} -> ${to}`);
    }
  }
  return folders;
}
