// The project's own lint rules (eslint.config.js turns them on): the shape of the code the developers' guide asks for
// (CONTRIBUTING.md, "Where code goes"; docs/architecture.md, "The layers"). Each message says what to do instead.
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

export default { meta: { name: 'onsale' }, rules: { 'sql-in-repositories': sqlInRepositories, 'domain-borders': domainBorders } };
