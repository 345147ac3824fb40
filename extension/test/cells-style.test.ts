/**
 * cells.css text contrast (>= 4.5:1) in JupyterLab Light and Dark, with the colours read
 * from the theme files JupyterLab installs (`<sys.prefix>/share/jupyter/lab/themes`), so a
 * theme change is seen.  Every rule that sets a text `color` is checked against the
 * `background` the same rule sets (the stylesheet's convention: text and its box together),
 * or the notebook's background (`--jp-layout-color0`) when it sets none.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

type RGBA = [number, number, number, number];

/**
 * The Python whose JupyterLab is checked: the one running the test suite
 * (tests/extension/test_extension_unit.py sets WORKBENCH_PYTHON to it), else, for vitest run by hand,
 * the active virtualenv's, else the first `python3` or `python` on PATH that has JupyterLab.
 */
function python(): string {
  if (process.env.WORKBENCH_PYTHON) {
    return process.env.WORKBENCH_PYTHON;
  }
  const candidates = [
    process.env.VIRTUAL_ENV && join(process.env.VIRTUAL_ENV, 'bin', 'python'),
    'python3',
    'python'
  ];
  for (const exe of candidates) {
    if (!exe) {
      continue;
    }
    try {
      execFileSync(exe, ['-c', 'import jupyterlab'], { stdio: 'ignore' });
      return exe;
    } catch {
      // not there, or without JupyterLab: try the next one
    }
  }
  throw new Error(
    'no Python with JupyterLab found: set WORKBENCH_PYTHON to the interpreter of the ' +
      'environment the extension is installed in'
  );
}

let themes: string | undefined;

function themesDir(): string {
  if (themes === undefined) {
    const prefix = execFileSync(
      python(),
      ['-c', 'import sys; print(sys.prefix)'],
      { encoding: 'utf8' }
    ).trim();
    themes = join(prefix, 'share', 'jupyter', 'lab', 'themes', '@jupyterlab');
  }
  return themes;
}

function themeVars(name: string): Record<string, string> {
  const css = readFileSync(join(themesDir(), name, 'index.css'), 'utf8');
  const out: Record<string, string> = {};
  for (const m of css.matchAll(/(--[\w-]+)\s*:\s*([^;}]+)/g)) {
    out[m[1]] = m[2].trim();
  }
  return out;
}

function resolve(value: string, env: Record<string, string>): string | null {
  const m = /^var\((--[\w-]+)\s*(?:,\s*(.+))?\)$/.exec(value.trim());
  if (!m) {
    return value.trim();
  }
  if (m[1] in env) {
    return resolve(env[m[1]], env);
  }
  return m[2] ? resolve(m[2], env) : null;
}

function rgba(text: string): RGBA | null {
  const c = text.trim().toLowerCase();
  if (c === 'white') {
    return [255, 255, 255, 1];
  }
  if (c === 'black') {
    return [0, 0, 0, 1];
  }
  if (c.startsWith('#')) {
    let h = c.slice(1);
    if (h.length <= 4) {
      h = [...h].map(x => x + x).join('');
    }
    return [
      parseInt(h.slice(0, 2), 16),
      parseInt(h.slice(2, 4), 16),
      parseInt(h.slice(4, 6), 16),
      h.length === 8 ? parseInt(h.slice(6, 8), 16) / 255 : 1
    ];
  }
  const m = /^rgba?\(([^)]*)\)$/.exec(c);
  if (!m) {
    return null;
  }
  const p = m[1]
    .split(/[,\s/]+/)
    .filter(Boolean)
    .map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
}

function contrast(fg: RGBA, bg: RGBA): number {
  const mix = [0, 1, 2].map(i => fg[i] * fg[3] + bg[i] * (1 - fg[3]));
  const lin = (v: number): number => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const lum = (c: number[]): number =>
    0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const a = lum(mix);
  const b = lum(bg);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

const css = readFileSync(
  new URL('../style/cells.css', import.meta.url),
  'utf8'
).replace(/\/\*[\s\S]*?\*\//g, '');

describe('cells.css text contrast in JupyterLab Light and Dark', () => {
  it('finds the installed themes', () => {
    expect(
      existsSync(join(themesDir(), 'theme-light-extension', 'index.css'))
    ).toBe(true);
  });

  for (const theme of ['theme-light-extension', 'theme-dark-extension']) {
    it(`every text colour reaches 4.5:1 in ${theme}`, () => {
      const env = themeVars(theme);
      const page = rgba(resolve('var(--jp-layout-color0)', env) ?? '') as RGBA;
      const checked: string[] = [];
      const bad: string[] = [];
      for (const m of css.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
        const selector = m[1].trim();
        const body = m[2];
        const color = /(?:^|[;\s])color\s*:\s*([^;]+)/.exec(body);
        if (!color) {
          continue;
        }
        const bgDecl = /(?:^|[;\s])background(?:-color)?\s*:\s*([^;]+)/.exec(
          body
        );
        const fg = rgba(resolve(color[1], env) ?? '');
        const bg = bgDecl ? rgba(resolve(bgDecl[1], env) ?? '') : page;
        expect(fg, `${selector} color ${color[1]}`).not.toBeNull();
        expect(bg, `${selector} background`).not.toBeNull();
        // a translucent box sits on the page
        const box: RGBA = [0, 1, 2]
          .map(i => bg![i] * bg![3] + page[i] * (1 - bg![3]))
          .concat(1) as RGBA;
        const r = contrast(fg!, box);
        checked.push(selector);
        if (r < 4.5) {
          bad.push(`${selector}: ${r.toFixed(2)}:1`);
        }
      }
      expect(checked.length).toBeGreaterThan(8);
      expect(bad).toEqual([]);
    });
  }
});
