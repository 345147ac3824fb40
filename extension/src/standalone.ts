/**
 * The standalone runtime: the same views as the JupyterLab extension, for every front end
 * that runs an output's scripts but has no renderer for our MIME types (VS Code, Colab,
 * exported HTML, Jupyter without this extension).
 *
 * scripts/bundle-standalone.mjs bundles this entry (with the views' CSS) into one ES
 * module, `workbench/views/static/standalone.js`, shipped inside the Python package.  The
 * kernel puts it, gzipped and in base64, into the `text/html` part of each output
 * (workbench/views/_standalone.py) beside the output's own data and a short loader script;
 * the loader decompresses it (`DecompressionStream`), imports it from a Blob URL (never
 * `eval`) and calls `mount` on the output's element.  Nothing is fetched from any host.
 *
 * `mount` draws into a shadow root (our CSS cannot leak into the page, the page's cannot
 * break the view) through `OutputHost`, the code the JupyterLab renderer uses, reading the
 * kind's view from `VIEWS` (common/viewRegistry.ts): a kind registered there draws in both.
 * Editor linking and the side panel stay JupyterLab features.
 */

import { keepKeysInside } from './common/keys';
import { OutputHost } from './common/outputHost';
import { gunzipText, kindOf, type Kind } from './common/payload';
import { VIEWS } from './common/viewRegistry';

/** The views' stylesheet (style/index.css's imports minus the JupyterLab-only ones). */
declare const __JWB_CSS__: string;

/** JupyterLab's theme variables the views read, for pages that do not define them. */
const LIGHT: Record<string, string> = {
  '--jp-ui-font-family':
    'system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif',
  '--jp-code-font-family': 'Menlo, Consolas, "DejaVu Sans Mono", monospace',
  '--jp-ui-font-size0': '11px',
  '--jp-ui-font-size1': '13px',
  '--jp-ui-font-size2': '15px',
  '--jp-code-font-size': '13px',
  '--jp-border-width': '1px',
  '--jp-cell-prompt-width': '64px',
  '--jp-cell-collapser-width': '8px',
  '--jp-elevation-z4': '0 2px 6px rgba(0, 0, 0, 0.25)',
  '--jp-ui-font-color0': 'rgba(0, 0, 0, 1)',
  '--jp-ui-font-color1': 'rgba(0, 0, 0, 0.87)',
  '--jp-ui-font-color2': 'rgba(0, 0, 0, 0.54)',
  '--jp-content-font-color1': 'rgba(0, 0, 0, 0.87)',
  '--jp-content-link-color': '#1976d2',
  '--jp-layout-color0': '#ffffff',
  '--jp-layout-color1': '#ffffff',
  '--jp-layout-color2': '#eeeeee',
  '--jp-layout-color3': '#bdbdbd',
  '--jp-inverse-layout-color3': '#616161',
  '--jp-border-color1': '#bdbdbd',
  '--jp-border-color2': '#e0e0e0',
  '--jp-border-color3': '#eeeeee',
  '--jp-brand-color0': '#0d47a1',
  '--jp-brand-color1': '#1976d2',
  '--jp-brand-color2': '#64b5f6',
  '--jp-warn-color0': '#e65100',
  '--jp-warn-color1': '#ef6c00',
  '--jp-warn-color2': '#ffa726',
  '--jp-warn-color3': '#ffe0b2',
  '--jp-error-color1': '#d32f2f',
  '--jp-success-color1': '#388e3c',
  '--jp-info-color1': '#0097a7',
  '--jp-mirror-editor-variable-2-color': '#05a',
  '--jp-mirror-editor-meta-color': '#aa22ff'
};

const DARK: Record<string, string> = {
  ...LIGHT,
  '--jp-ui-font-color0': 'rgba(255, 255, 255, 1)',
  '--jp-ui-font-color1': 'rgba(255, 255, 255, 0.87)',
  '--jp-ui-font-color2': 'rgba(255, 255, 255, 0.54)',
  '--jp-content-font-color1': 'rgba(255, 255, 255, 1)',
  '--jp-content-link-color': '#64b5f6',
  '--jp-layout-color0': '#111111',
  '--jp-layout-color1': '#212121',
  '--jp-layout-color2': '#424242',
  '--jp-layout-color3': '#616161',
  '--jp-inverse-layout-color3': '#eeeeee',
  '--jp-border-color1': '#616161',
  '--jp-border-color2': '#424242',
  '--jp-border-color3': '#212121',
  '--jp-brand-color0': '#90caf9',
  '--jp-brand-color1': '#64b5f6',
  '--jp-brand-color2': '#1976d2',
  '--jp-warn-color3': '#6d4c41'
};

function declarations(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([k, v]) => `${k}:${v};`)
    .join('');
}

const SHEET =
  ':host{display:block}' +
  `.jwb-sa-root[data-jwb-theme="light"]{${declarations(LIGHT)}}` +
  `.jwb-sa-root[data-jwb-theme="dark"]{${declarations(DARK)}}` +
  '.jwb-sa-root{color:var(--jp-ui-font-color1);background:var(--jp-layout-color0);' +
  'font-family:var(--jp-ui-font-family);font-size:var(--jp-ui-font-size1)}' +
  // defined by the bundler; absent when the module runs unbundled (the unit tests)
  (typeof __JWB_CSS__ === 'string' ? __JWB_CSS__ : '');

/** 'light'/'dark' where the page has no JupyterLab theme, null where it has one. */
function defaultTheme(box: Element): 'light' | 'dark' | null {
  if (getComputedStyle(box).getPropertyValue('--jp-layout-color0').trim()) {
    return null;
  }
  const body = document.body;
  if (
    body?.classList.contains('vscode-dark') ||
    body?.classList.contains('vscode-high-contrast') ||
    (typeof matchMedia === 'function' &&
      matchMedia('(prefers-color-scheme: dark)').matches &&
      !body?.classList.contains('vscode-light'))
  ) {
    return 'dark';
  }
  return 'light';
}

function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64.trim());
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) {
    out[i] = bin.charCodeAt(i);
  }
  return out;
}

/**
 * Draw `data` (an output's MIME bundle: our payload and its `text/plain`) into a shadow
 * root on `box`; returns the element the view draws into (`.jwb-ext`, `data-jwb-ready`).
 */
export async function render(
  box: HTMLElement,
  data: Record<string, unknown>
): Promise<HTMLElement> {
  const mime = Object.keys(data).find(m => kindOf(m) !== null);
  if (!mime) {
    throw new Error('no jax-workbench payload in this output');
  }
  const kind = kindOf(mime)!;
  const shadowHost = document.createElement('div');
  shadowHost.className = 'jwb-sa-host';
  box.appendChild(shadowHost);
  const shadow = shadowHost.attachShadow({ mode: 'open' });
  const style = document.createElement('style');
  style.textContent = SHEET;
  shadow.appendChild(style);
  const root = document.createElement('div');
  root.className = 'jwb-sa-root';
  const theme = defaultTheme(box);
  if (theme) {
    root.setAttribute('data-jwb-theme', theme);
  }
  const node = document.createElement('div');
  node.className = `jwb-ext jwb-ext-${kind}`;
  root.appendChild(node);
  shadow.appendChild(root);
  keepKeysInside(node);
  await new OutputHost(node, mime, VIEWS[kind as Kind]).render(data);
  return node;
}

/**
 * Mount the output whose element is `box` (the `text/html` part's outer element): read its
 * data (`script.jwb-data`: gzip + base64 JSON of the MIME bundle), draw it, hide the
 * static summary.  Mounting the same element twice does nothing.
 */
export async function mount(box: HTMLElement): Promise<void> {
  if (box.hasAttribute('data-jwb-mounted')) {
    return;
  }
  box.setAttribute('data-jwb-mounted', '1');
  const source = box.querySelector('script.jwb-data');
  if (!source?.textContent) {
    throw new Error('this output carries no data');
  }
  const data = JSON.parse(
    await gunzipText(base64ToBytes(source.textContent))
  ) as Record<string, unknown>;
  const summary = box.querySelector<HTMLElement>('.jwb-static');
  await render(box, data);
  if (summary) {
    summary.style.display = 'none';
  }
}
