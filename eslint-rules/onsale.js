// The project's own lint rules (eslint.config.js turns them on): the shape of the code the developers' guide asks for
// (CONTRIBUTING.md, "SQL only in repositories" and "Domains with borders"; docs/architecture.md, "The layers"). Each message says what to do instead.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

/** packages/shared/src, where every domain is a folder. */
const SHARED_SRC = join('packages', 'shared', 'src');

/** Kysely's query builders that start a statement. */
const BUILDERS = new Set(['selectFrom', 'insertInto', 'updateTable', 'deleteFrom', 'replaceInto', 'mergeInto', 'with', 'withRecursive']);

/** The root-relative path of a file, with forward slashes. */
const rel = (cwd, file) => relative(cwd, file).split(sep).join('/');

/** The domain a root-relative path belongs to (its folder under packages/shared/src), or null. */
function domainOf(path) {
  const prefix = `${SHARED_SRC.split(sep).join('/')}/`;
  if (!path.startsWith(prefix)) return null;
  const rest = path.slice(prefix.length);
  const slash = rest.indexOf('/');
  return slash === -1 ? null : rest.slice(0, slash);
}

/** The `sql` tag of `sql\`...\`` or `sql<T>\`...\`` (kysely's raw SQL). */
const isSqlTag = (tag) => tag.type === 'Identifier' && tag.name === 'sql';

const sqlInRepositories = {
  meta: {
    type: 'problem',
    docs: { description: 'SQL (kysely builders and the sql tag) only in *.repository.ts files and migrations' },
    schema: [],
    messages: {
      query:
        "SQL belongs in a repository: move this {{what}} into a function of {{repository}} (taking `db` or the caller's transaction, returning rows) and call that function here. See CONTRIBUTING.md, 'SQL only in repositories'.",
    },
  },
  create(context) {
    const file = context.filename;
    const here = basename(file).replace(/\.[cm]?[jt]sx?$/, '');
    const repository = join(dirname(rel(context.cwd, file)), `${here.split('.')[0]}.repository.ts`)
      .split(sep)
      .join('/');
    const report = (node, what) => context.report({ node, messageId: 'query', data: { what, repository } });
    return {
      TaggedTemplateExpression(node) {
        if (isSqlTag(node.tag)) report(node, 'sql`...` statement');
      },
      CallExpression(node) {
        const callee = node.callee;
        if (callee.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier') return;
        if (BUILDERS.has(callee.property.name)) report(node, `kysely .${callee.property.name}() query`);
        // sql.raw(), sql.ref(), sql.lit(), sql.join(), sql.id(), sql.table(), sql.val(): SQL built by hand.
        else if (callee.object.type === 'Identifier' && callee.object.name === 'sql')
          report(node, `sql.${callee.property.name}() fragment`);
      },
    };
  },
};

const domainBorders = {
  meta: {
    type: 'problem',
    docs: { description: 'a domain uses another only through its service or index, never its repository or table files' },
    schema: [],
    messages: {
      border:
        "{{from}}/ may not import {{target}}: another domain's repository and table files are its own. Import what you need from '../{{to}}/index.js' or a '../{{to}}/*.service.js' file (add a function there that does the work, or export the type there); if the two domains need each other both ways, the shared part belongs in the lower one. See CONTRIBUTING.md, 'Domains with borders'.",
    },
  },
  create(context) {
    const cwd = context.cwd;
    const from = domainOf(rel(cwd, context.filename));
    if (!from) return {};
    const check = (node) => {
      const source = node.source?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = rel(cwd, resolve(dirname(context.filename), source));
      const to = domainOf(target);
      if (!to || to === from) return;
      if (/\.(repository|table)(\.[cm]?[jt]sx?)?$/.test(basename(target)))
        context.report({ node: node.source, messageId: 'border', data: { from, to, target: source } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

/** The relative specifiers a source text imports or re-exports (static and dynamic), without parsing it. */
const SPECIFIERS = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.[^'"]+)['"]/g;

/** Source files of a folder tree, tests and benchmarks left out (they may reach across layers to set a case up). */
function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (/\.tsx?$/.test(entry.name) && !/\.(test|bench)\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** The folder (domain) of an absolute path under `root`, or null for a file at the root or outside it. */
function folderOf(root, path) {
  const parts = relative(root, path).split(sep);
  return parts.length < 2 || parts[0] === '..' ? null : parts[0];
}

/**
 * The domain folders' import graph, read from disk once per lint run (about 400 files by regular expression: a few
 * milliseconds): folder -> folder -> one file that makes the edge (for the message).
 */
const graphs = new Map();
function folderGraph(root) {
  let graph = graphs.get(root);
  if (graph) return graph;
  graph = new Map();
  for (const file of sourceFiles(root)) {
    const from = folderOf(root, file);
    if (!from) continue;
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(SPECIFIERS)) {
      const to = folderOf(root, resolve(dirname(file), spec));
      if (!to || to === from) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      const edges = graph.get(from);
      if (!edges.has(to)) edges.set(to, new Set());
      edges.get(to).add(file);
    }
  }
  graphs.set(root, graph);
  return graph;
}

/** A path of folders from `start` to `goal` through `edges(folder)`, or null. Breadth first: the shortest. */
function pathBetween(start, goal, edges) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift();
    if (at === goal) {
      const path = [];
      for (let f = at; f !== null; f = previous.get(f)) path.unshift(f);
      return path;
    }
    for (const next of edges(at)) {
      if (previous.has(next)) continue;
      previous.set(next, at);
      queue.push(next);
    }
  }
  return null;
}

const domainLayers = {
  meta: {
    type: 'problem',
    docs: { description: 'the domain folders of packages/shared/src form layers: no import cycle between two folders' },
    schema: [
      {
        type: 'object',
        properties: {
          // Folders that are not domains: not part of the layers (the database layer names every table).
          outside: { type: 'array', items: { type: 'string' } },
          // The folder the domains are in, relative to the working directory (the tests plant a tree of their own).
          root: { type: 'string' },
          // Known loops still to break, as 'from -> to' edges: not followed, not reported (eslint.config.js says why).
          allow: { type: 'array', items: { type: 'string', pattern: '^[\\w-]+ -> [\\w-]+$' } },
        },
        additionalProperties: false,
      },
    ],
    messages: {
      cycle:
        "{{from}}/ may not import {{target}}: {{to}}/ already depends on {{from}}/ ({{path}}), so the domain folders would import each other in a loop. Domains form layers (docs/architecture.md, 'The layers'): move the shared rule into the lower folder, hand the lower one a callback, or move the orchestration up. See CONTRIBUTING.md, 'Domains with borders'.",
    },
  },
  create(context) {
    const options = context.options[0] ?? {};
    const outside = new Set(options.outside ?? []);
    const allowed = new Set(options.allow ?? []);
    const root = resolve(context.cwd, options.root ?? SHARED_SRC);
    const file = resolve(context.cwd, context.filename);
    const from = folderOf(root, file);
    if (!from || outside.has(from) || /\.(test|bench)\.tsx?$/.test(file)) return {};
    const imports = [];
    const collect = (node) => {
      const source = node.source?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const to = folderOf(root, resolve(dirname(file), source));
      if (to && to !== from && !outside.has(to)) imports.push({ node: node.source, source, to });
    };
    return {
      ImportDeclaration: collect,
      ExportNamedDeclaration: collect,
      ExportAllDeclaration: collect,
      ImportExpression: collect,
      'Program:exit'() {
        if (imports.length === 0) return;
        const graph = folderGraph(root);
        // The folders each folder imports, this file's imports as they are in the text linted (not on disk).
        const mine = new Set(imports.map((i) => i.to));
        const edges = (folder) => {
          const out = [];
          for (const [to, files] of graph.get(folder) ?? []) {
            if (outside.has(to) || allowed.has(`${folder} -> ${to}`)) continue;
            if (folder === from && files.size === 1 && files.has(file) && !mine.has(to)) continue;
            out.push(to);
          }
          if (folder === from) for (const to of mine) if (!out.includes(to) && !allowed.has(`${from} -> ${to}`)) out.push(to);
          return out;
        };
        for (const { node, source, to } of imports) {
          if (allowed.has(`${from} -> ${to}`)) continue;
          const back = pathBetween(to, from, edges);
          if (!back) continue;
          const path = [from, ...back].map((f) => `${f}/`).join(' -> ');
          context.report({ node, messageId: 'cycle', data: { from, to, target: source, path } });
        }
      },
    };
  },
};

export default {
  meta: { name: 'onsale' },
  rules: { 'sql-in-repositories': sqlInRepositories, 'domain-borders': domainBorders, 'domain-layers': domainLayers },
};
