// Generate the TypeScript types of the contract from the JSON Schemas in workbench/schemas/:
// one file per schema, src/generated/<path of the schema, less .schema.json>.ts, and
// src/generated/versions.ts (each payload kind's `version`, the side panel's protocol).
//
//   node scripts/generate-types.mjs              write src/generated/ (npm run generate)
//   node scripts/generate-types.mjs --out DIR    write DIR instead (the suite's check that the
//                                                committed files are current)
//
// The generated files are committed: a schema change shows its TypeScript effect in the same
// diff, the extension type-checks and builds straight after `npm ci`, and the wheel build
// (hatch-jupyter-builder -> npm run build) needs no generator and no Python.
// The suite (tests/extension/test_extension_contract.py) regenerates into a temporary folder
// and fails when a committed file differs.
//
// Names: every `$defs` entry has a `title`, its TypeScript name (unique across all schemas);
// a payload schema's root is `<Kind>Payload` (hlo -> HloPayload, cache-cell ->
// CacheCellPayload), a comm schema's root `<Name>Message`.  Every `$ref` becomes that name,
// and a reference into another schema file an `import type` of it, so each type is declared
// exactly once.
//
// json-schema-to-typescript reads draft-07; the few 2020-12 and validation-only keywords are
// translated or dropped here, for the TypeScript only (validation uses the schemas as they
// are): `prefixItems` -> tuple `items`; the length bounds of a list (not a tuple); combinators that only constrain which properties are
// present (`oneOf: [{required}, {not}]`), `if`/`then`/`else`, `not` and `contentSchema` say
// nothing about the shape of a value and are left out; an object with `properties` and no
// `additionalProperties` is closed (readers ignore fields they do not know), one without
// `properties` is an open map.
import { compile } from 'json-schema-to-typescript';
import { format } from 'prettier';
import {
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXTENSION = join(HERE, '..');
const SCHEMAS = join(EXTENSION, '..', 'workbench', 'schemas');
const SUFFIX = '.schema.json';
const ID_PREFIX = 'urn:jax-workbench:schema:';
/** schema files that are not a payload kind (no root type) */
const SHARED = new Set(['common']);

const pascal = s =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map(w => w[0].toUpperCase() + w.slice(1))
    .join('');

/** Every schema file under workbench/schemas, as `{rel, schema}` (rel: `hlo`, `comm/sidepanel`). */
function schemaFiles(dir = SCHEMAS, prefix = '') {
  const found = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      found.push(...schemaFiles(path, `${prefix}${name}/`));
    } else if (name.endsWith(SUFFIX)) {
      const rel = prefix + name.slice(0, -SUFFIX.length);
      found.push({ rel, schema: JSON.parse(readFileSync(path, 'utf8')) });
    }
  }
  return found;
}

function rootName({ rel }) {
  if (SHARED.has(rel)) {
    return null;
  }
  const [dir, ...rest] = rel.split('/');
  return rest.length && dir === 'comm'
    ? `${pascal(rest.join('-'))}Message`
    : `${pascal(rel)}Payload`;
}

/** Every titled subschema under `node` (a $def, or an inline item schema with a title). */
function* titled(node, path) {
  if (Array.isArray(node)) {
    for (const [i, v] of node.entries()) {
      yield* titled(v, `${path}/${i}`);
    }
  } else if (node && typeof node === 'object') {
    if (typeof node.title === 'string' && path !== '') {
      yield [node.title, path];
    }
    for (const [k, v] of Object.entries(node)) {
      yield* titled(v, `${path}/${k}`);
    }
  }
}

const files = schemaFiles();
const byId = new Map(files.map(f => [f.schema.$id, f]));
/** `$id#/$defs/name` -> its TypeScript name, and the file that declares it */
const names = new Map();
const seen = new Map();
for (const f of files) {
  if (!f.schema.$id?.startsWith(ID_PREFIX)) {
    throw new Error(`${f.rel}${SUFFIX}: $id must start with ${ID_PREFIX}`);
  }
  f.root = rootName(f);
  if (f.root) {
    names.set(f.schema.$id, { name: f.root, file: f });
  }
  for (const [key, def] of Object.entries(f.schema.$defs ?? {})) {
    if (
      typeof def.title !== 'string' ||
      !/^[A-Z][A-Za-z0-9]*$/.test(def.title)
    ) {
      throw new Error(
        `${f.rel}${SUFFIX}#/$defs/${key} needs a PascalCase title`
      );
    }
    names.set(`${f.schema.$id}#/$defs/${key}`, { name: def.title, file: f });
  }
  const { title: _rootTitle, ...rest } = f.schema;
  for (const [title, path] of titled(rest, '')) {
    const where = `${f.rel}${SUFFIX}#${path}`;
    if (seen.has(title)) {
      throw new Error(`title ${title} twice: ${seen.get(title)} and ${where}`);
    }
    seen.set(title, where);
  }
}
for (const f of files) {
  if (f.root && seen.has(f.root)) {
    throw new Error(
      `title ${f.root} (${seen.get(f.root)}) is ${f.rel}'s root type`
    );
  }
}

/** The definition a `$ref` of schema `f` points at, and its name. */
function resolve(ref, f) {
  const [base, pointer = ''] = ref.split('#');
  const id = base === '' ? f.schema.$id : base;
  const target = byId.get(id);
  const key = pointer ? `${id}#${pointer}` : id;
  const named = names.get(key);
  if (!target || !named) {
    throw new Error(
      `${f.rel}${SUFFIX}: cannot name $ref ${ref} (a whole schema or one of its $defs)`
    );
  }
  const def = pointer
    ? pointer
        .split('/')
        .filter(Boolean)
        .reduce((node, part) => node[part], target.schema)
    : target.schema;
  return { def, ...named };
}

/** Keys of a branch that say what a value is (not only which properties it must have). */
const SHAPE = [
  'type',
  'properties',
  '$ref',
  'const',
  'enum',
  'items',
  'prefixItems',
  'additionalProperties',
  'oneOf',
  'anyOf',
  'allOf'
];
const onlyConstrains = branch => !SHAPE.some(k => k in branch);

/** The schema as json-schema-to-typescript reads it; `imports` collects names from other files. */
function forTypeScript(node, f, imports) {
  if (Array.isArray(node)) {
    return node.map(v => forTypeScript(v, f, imports));
  }
  if (!node || typeof node !== 'object') {
    return node;
  }
  if (typeof node.$ref === 'string') {
    const { def, name, file } = resolve(node.$ref, f);
    if (file !== f) {
      imports.add(`${file.rel}\u0000${name}`);
    }
    const extra = (node.required ?? []).filter(
      k => !(def.required ?? []).includes(k)
    );
    const tsType = extra.length
      ? `${name} & Required<Pick<${name}, ${extra.map(k => `'${k}'`).join(' | ')}>>`
      : name;
    const out = { tsType };
    for (const k of ['title', 'description']) {
      if (k in node) {
        out[k] = node[k];
      }
    }
    return out;
  }
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (
      ['$schema', '$id', 'if', 'then', 'else', 'not', 'contentSchema'].includes(
        k
      )
    ) {
      continue;
    }
    if ((k === 'oneOf' || k === 'anyOf') && v.every(onlyConstrains)) {
      continue;
    }
    out[k === 'prefixItems' ? 'items' : k] = forTypeScript(v, f, imports);
  }
  // bounds of a list (not a tuple) are for validation: [] stays a valid list in TypeScript
  if (out.items && !Array.isArray(out.items)) {
    delete out.minItems;
    delete out.maxItems;
  }
  if (out.properties && !('additionalProperties' in out)) {
    out.additionalProperties = false;
  }
  delete out.unevaluatedProperties;
  return out;
}

const STYLE = JSON.parse(
  readFileSync(join(EXTENSION, 'package.json'), 'utf8')
).prettier;

const PLACEHOLDER = 'GeneratedSchemaWrapper';
const ROOT_KEY = 'generated_schema_root';

async function generate(f) {
  const imports = new Set();
  const { $defs = {}, ...root } = forTypeScript(f.schema, f, imports);
  // every definition and the root (titled with its name) as $defs of an empty wrapper whose
  // own declaration is dropped: each is declared once, whatever the root's shape
  const defs = { ...$defs };
  if (f.root) {
    defs[ROOT_KEY] = { ...root, title: f.root };
  }
  const wrapper = {
    title: PLACEHOLDER,
    type: 'object',
    properties: {},
    additionalProperties: false,
    $defs: defs
  };
  let code = await compile(wrapper, PLACEHOLDER, {
    bannerComment: '',
    additionalProperties: true,
    unreachableDefinitions: true,
    declareExternallyReferenced: true,
    strictIndexSignatures: false,
    unknownAny: true,
    format: false
  });
  // the pointer back to the schema, in place of the generator's sentence about it
  code = code.replace(
    /This interface was referenced by `[^`]+`'s JSON-Schema\n \* via the `definition` "([^"]+)"\./g,
    (_, key) =>
      key === ROOT_KEY
        ? `Schema: \`workbench/schemas/${f.rel}${SUFFIX}\`.`
        : `Schema: \`workbench/schemas/${f.rel}${SUFFIX}#/$defs/${key}\`.`
  );
  const empty = new RegExp(`export interface ${PLACEHOLDER} \\{\\s*\\}`);
  if (!empty.test(code)) {
    throw new Error(`${f.rel}: the wrapper was not declared as expected`);
  }
  code = code.replace(empty, '');
  const byFile = new Map();
  for (const entry of imports) {
    const [rel, name] = entry.split('\u0000');
    byFile.set(rel, [...(byFile.get(rel) ?? []), name].sort());
  }
  const from = dirname(f.rel);
  const importLines = [...byFile.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([rel, ns]) => {
      let path = relative(from, rel);
      path = path.startsWith('.') ? path : `./${path}`;
      return `import type { ${ns.join(', ')} } from '${path}';`;
    });
  const what = f.root
    ? `the ${f.root} type and its definitions`
    : 'the definitions several schemas share';
  const banner =
    `/**\n * Generated by scripts/generate-types.mjs from workbench/schemas/${f.rel}${SUFFIX}:\n` +
    ` * ${what}.\n * Do not edit: change the schema and run \`npm run generate\`.\n */\n`;
  return await format(
    banner +
      (importLines.length ? `\n${importLines.join('\n')}\n` : '') +
      '\n' +
      code.trim() +
      '\n',
    { ...STYLE, parser: 'typescript' }
  );
}

function versions() {
  const kinds = files
    .filter(f => !SHARED.has(f.rel) && !f.rel.includes('/'))
    .map(f => [f.rel, f.schema.properties?.version?.const]);
  for (const [kind, v] of kinds) {
    if (!Number.isInteger(v)) {
      throw new Error(
        `${kind}${SUFFIX}: properties.version must be {"const": <integer>}`
      );
    }
  }
  const comms = files
    .filter(f => f.rel.startsWith('comm/'))
    .map(f => [f.rel.slice('comm/'.length), f.schema.$defs?.protocol?.const]);
  const key = k => (/^[a-z]+$/.test(k) ? k : `'${k}'`);
  return (
    '/**\n * Generated by scripts/generate-types.mjs from workbench/schemas/: the payload versions\n' +
    ' * and comm protocols this extension is built against.  Do not edit: change the schemas\n' +
    ' * and run `npm run generate`.\n */\n\n' +
    "/** Each payload kind's schema `version` (`properties.version.const`): a payload of a newer\n" +
    ' * version is shown as such, not drawn. */\n' +
    'export const PAYLOAD_VERSIONS = {\n' +
    kinds.map(([k, v]) => `  ${key(k)}: ${v}`).join(',\n') +
    '\n} as const;\n\n' +
    '/** Every payload kind (one schema file each). */\n' +
    'export type Kind = keyof typeof PAYLOAD_VERSIONS;\n\n' +
    "/** Each comm's protocol number (`comm/<name>.schema.json#/$defs/protocol`). */\n" +
    'export const COMM_PROTOCOLS = {\n' +
    comms.map(([k, v]) => `  ${key(k)}: ${v}`).join(',\n') +
    '\n} as const;\n'
  );
}

async function main(argv) {
  let out = join(EXTENSION, 'src', 'generated');
  const i = argv.indexOf('--out');
  if (i >= 0) {
    out = argv[i + 1];
  } else if (argv.length) {
    throw new Error(
      `usage: generate-types.mjs [--out DIR] (got ${argv.join(' ')})`
    );
  }
  const written = new Map([
    [
      'versions.ts',
      await format(versions(), { ...STYLE, parser: 'typescript' })
    ]
  ]);
  for (const f of files) {
    written.set(`${f.rel}.ts`, await generate(f));
  }
  // a schema removed or renamed: its old file goes (the worker sources are not ours)
  const stale = (dir, prefix = '') =>
    readdirSync(dir).flatMap(name => {
      const p = join(dir, name);
      return statSync(p).isDirectory()
        ? stale(p, `${prefix}${name}/`)
        : [`${prefix}${name}`];
    });
  mkdirSync(out, { recursive: true });
  for (const rel of stale(out)) {
    if (
      rel.endsWith('.ts') &&
      !rel.endsWith('.worker-source.ts') &&
      !written.has(rel)
    ) {
      rmSync(join(out, rel));
    }
  }
  for (const [rel, text] of written) {
    mkdirSync(dirname(join(out, rel)), { recursive: true });
    writeFileSync(join(out, rel), text);
  }
  console.log(`generated ${written.size} files in ${out}`);
}

await main(process.argv.slice(2));
