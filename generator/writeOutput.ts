import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { listFiles } from './compareOutput.js';

export interface WriteSummary {
  written: string[];
  unchanged: number;
  removed: string[];
}

/** Where files go and what is there already: enough for another thread to write some of them. */
export interface OutputTarget {
  outDir: string;
  /** The files the folder held before the build, relative paths. */
  present: ReadonlySet<string>;
}

/**
 * Writes each file whose text differs from the folder's (or that is new), making its folder
 * first. Returns the paths written.
 */
export function writeChanged(target: OutputTarget, files: Iterable<readonly [string, string]>): string[] {
  const written: string[] = [];
  const madeDirs = new Set<string>();
  for (const [path, text] of files) {
    const file = join(target.outDir, path);
    if (target.present.has(path) && readFileSync(file, 'utf8') === text) continue;
    const folder = dirname(file);
    if (!madeDirs.has(folder)) {
      mkdirSync(folder, { recursive: true });
      madeDirs.add(folder);
    }
    writeFileSync(file, text);
    written.push(path);
  }
  return written;
}

/**
 * Makes `outDir` hold exactly the files given: changed files are written, files build no longer
 * produces are removed. Files can be written in parts while a build still makes the rest, here
 * (`write`) or by another thread (`target`, then `adopt`), so that the disk works while the
 * processor does; `finish` takes the complete set.
 */
export class OutputWriter {
  readonly target: OutputTarget;
  private readonly handled = new Set<string>();
  private readonly written: string[] = [];

  /** Refuses a non-empty folder that build did not write before. */
  constructor(outDir: string) {
    const present = listFiles(outDir);
    if (present.length > 0 && !present.includes('metadata.json')) {
      throw new Error(
        `${outDir} holds files but no metadata.json: not an entigen output folder, refusing to overwrite it`,
      );
    }
    this.target = { outDir, present: new Set(present) };
  }

  /** Writes each file not handled yet. */
  write(files: ReadonlyMap<string, string>): void {
    const fresh = [...files].filter(([path]) => !this.handled.has(path));
    this.adopt(
      fresh.map(([path]) => path),
      writeChanged(this.target, fresh),
    );
  }

  /** Files another thread has handled (`handled`), of which it wrote `written`. */
  adopt(handled: Iterable<string>, written: readonly string[]): void {
    for (const path of handled) this.handled.add(path);
    this.written.push(...written);
  }

  /** Writes what is left of `files`, removes what the folder holds beyond them. */
  finish(files: ReadonlyMap<string, string>): WriteSummary {
    this.write(files);
    const removed = [...this.target.present].filter((path) => !files.has(path));
    for (const path of removed) rmSync(join(this.target.outDir, path));
    return { written: this.written.sort(), unchanged: files.size - this.written.length, removed };
  }
}

/** Makes `outDir` hold exactly `files` at once (see OutputWriter). */
export function writeOutput(outDir: string, files: ReadonlyMap<string, string>): WriteSummary {
  return new OutputWriter(outDir).finish(files);
}
