// The workspace's tsconfigs grouped by their compiler options, for `npm run typecheck` (scripts/typecheck.mjs) and
// ESLint's type-aware rules (eslint.config.js): one TypeScript program per group rather than one per tsconfig.
//
// The tsconfigs whose compiler options are the same (the root's, packages/shared's, the store API's, the BFF's, the
// CLI's and the edge's tsconfig.node.json: all tsconfig.base.json as it stands) make ONE program over the union of
// their files: each package imports packages/shared's sources (and the root's scripts import every app), so with one
// program per tsconfig, shared's ~400 files are worked out again in every program. A file checked under the same
// options gives the same errors in either program; what one program adds is the other packages' module augmentations
// (`declare module 'fastify'` in the store API and the BFF), which the root's program, holding every app, had already.
// Projects with options of their own (the console, the fan app, the edge's worker) stay programs of their own.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';

// TypeScript 5.9's API reads each tsconfig (extends, include) the way the compiler does, to compare their options.
const ts = createRequire(import.meta.url)('typescript');

/** Every tsconfig of the workspace: the root's, then each package's `tsconfig*.json`. */
export function workspaceTsconfigs(root) {
  const projects = [join(root, 'tsconfig.json')];
  for (const group of ['packages', 'apps']) {
    for (const pkg of readdirSync(join(root, group)).sort()) {
      const dir = join(root, group, pkg);
      if (!existsSync(join(dir, 'package.json'))) continue;
      for (const f of readdirSync(dir).sort()) if (/^tsconfig(\..+)?\.json$/.test(f)) projects.push(join(dir, f));
    }
  }
  return projects;
}

/** Writes `text` to `file` unless it holds it already; through a rename, so a reader beside never sees half of it. */
function writeIfChanged(file, text) {
  if (existsSync(file) && readFileSync(file, 'utf8') === text) return;
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/**
 * The tsconfigs grouped by compiler options. Each group: `projects` (its tsconfigs, absolute), `files` (the files
 * their `include`s name, absolute), `members` (each tsconfig with its own files) and `tsconfig`, the one to give the compiler: the member itself when alone, else a
 * tsconfig written under node_modules/.cache/<cacheName> that extends the first member (all alike) and lists every
 * member's files. A tsconfig that does not parse is a group of its own (the compiler then says why).
 */
export function tsconfigGroups(root, cacheName) {
  const groups = new Map();
  for (const project of workspaceTsconfigs(root)) {
    const parsed = ts.getParsedCommandLineOfConfigFile(project, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    if (!parsed || parsed.errors.length > 0) {
      groups.set(project, { projects: [project], files: [], members: [{ project, files: [] }] });
      continue;
    }
    const { configFilePath: _path, pathsBasePath: _base, ...options } = parsed.options;
    const key = JSON.stringify(options, Object.keys(options).sort());
    const group = groups.get(key) ?? { projects: [], files: [], members: [] };
    const files = parsed.fileNames.map((f) => f.split('/').join(sep));
    group.projects.push(project);
    group.files.push(...files);
    group.members.push({ project, files });
    groups.set(key, group);
  }
  return [...groups.values()].map((group) => {
    if (group.projects.length === 1) return { ...group, tsconfig: group.projects[0] };
    const name = relative(root, group.projects[0]).replace(/[\\/]/g, '_');
    const tsconfig = join(root, 'node_modules', '.cache', cacheName, name);
    const config = { extends: group.projects[0], include: [], files: [...new Set(group.files)].sort() };
    writeIfChanged(tsconfig, JSON.stringify(config, null, 2));
    return { ...group, tsconfig };
  });
}
