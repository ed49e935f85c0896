import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The project's root folder. */
export const PROJECT_ROOT = resolve(__dirname, '../../..');

/** One import (or re-export, require, dynamic import) of a source file. */
export interface ImportStatement {
  specifier: string;
  typeOnly: boolean;
}

/** The imports a TypeScript file makes, read from its text (no compiler needed). */
export function importsOf(file: string): ImportStatement[] {
  const source = readFileSync(file, 'utf8');
  const found: ImportStatement[] = [];
  for (const match of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^'";]*?from\s+['"]([^'"]+)['"]/gm)) {
    found.push({ specifier: match[3] as string, typeOnly: Boolean(match[2]) });
  }
  for (const match of source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm))
    found.push({ specifier: match[1] as string, typeOnly: false });
  for (const match of source.matchAll(/require\(\s*['"]([^'"]+)['"]\s*\)|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    found.push({ specifier: (match[1] ?? match[2]) as string, typeOnly: false });
  }
  return found;
}

/** The file a relative specifier names (`x` → `x.ts` or `x/index.ts`, `x.json` → itself); throws when there is none. */
export function resolveFile(from: string, specifier: string): string {
  const base = resolve(dirname(from), specifier);
  // A data file imported by its full name (the contract's JSON Schemas in schemas/).
  const candidates = specifier.endsWith('.json') ? [base] : [`${base}.ts`, join(base, 'index.ts')];
  for (const candidate of candidates) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next
    }
  }
  throw new Error(`cannot resolve ${specifier} from ${from}`);
}

/** Every .ts file under a folder of the project, recursively, as absolute paths. */
export function typeScriptFilesUnder(folder: string): string[] {
  const files: string[] = [];
  const walk = (directory: string) => {
    for (const name of readdirSync(directory)) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const path = join(directory, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) files.push(path);
    }
  };
  walk(join(PROJECT_ROOT, folder));
  return files.sort();
}

/** A path relative to the project root, with forward slashes. */
export function projectPath(file: string): string {
  return relative(PROJECT_ROOT, file).split('\\').join('/');
}
