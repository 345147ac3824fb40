// Bundle src/standalone.ts (every view, no JupyterLab) and the views' CSS into one ES module,
// ../workbench/views/static/standalone.js: the runtime the kernel embeds, gzipped, in the
// text/html part of outputs (workbench/views/_standalone.py), for front ends without the
// extension.  It ships inside the Python package (pyproject.toml's wheel artifacts), so a
// wheel installed where there is no Node.js still embeds it.  Run after bundle-workers.mjs
// (the HLO view imports the layout worker's generated source).
import { build, transform } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const here = new URL('..', import.meta.url).pathname;
const styleDir = join(here, 'style');
// style/index.css's imports, minus what only JupyterLab's own panels use
const JUPYTERLAB_ONLY = new Set(['sidepanel.css', 'cells.css']);
const sheets = [
  ...readFileSync(join(styleDir, 'index.css'), 'utf8').matchAll(
    /@import url\('([^']+)'\)/g
  )
]
  .map(m => m[1])
  .filter(name => !JUPYTERLAB_ONLY.has(name));
const css = (
  await transform(
    sheets.map(s => readFileSync(join(styleDir, s), 'utf8')).join('\n'),
    { loader: 'css', minify: true }
  )
).code;

const out = join(here, '..', 'workbench', 'views', 'static', 'standalone.js');
const result = await build({
  entryPoints: [join(here, 'src', 'standalone.ts')],
  bundle: true,
  format: 'esm',
  target: 'es2020',
  minify: true,
  write: false,
  platform: 'browser',
  legalComments: 'none',
  define: { __JWB_CSS__: JSON.stringify(css) }
});
const code = result.outputFiles[0].text;
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, code);
console.log(
  `bundled standalone.js (${code.length} bytes; css ${css.length} bytes of ${sheets.length} sheets)`
);
