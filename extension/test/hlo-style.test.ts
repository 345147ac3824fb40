import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// JupyterLab 4.6 theme values of the variables hlo.css uses for text and its backgrounds
// (theme-light-extension / theme-dark-extension index.css)
const THEMES: Record<
  string,
  Record<string, [number, number, number, number]>
> = {
  light: {
    '--jp-layout-color0': [255, 255, 255, 1],
    '--jp-layout-color1': [255, 255, 255, 1],
    '--jp-layout-color2': [238, 238, 238, 1],
    '--jp-ui-font-color1': [0, 0, 0, 0.87],
    '--jp-ui-font-color2': [0, 0, 0, 0.54],
    '--jp-warn-color0': [230, 81, 0, 1],
    '--jp-content-font-color1': [0, 0, 0, 0.87]
  },
  dark: {
    '--jp-layout-color0': [17, 17, 17, 1],
    '--jp-layout-color1': [33, 33, 33, 1],
    '--jp-layout-color2': [66, 66, 66, 1],
    '--jp-ui-font-color1': [255, 255, 255, 0.87],
    '--jp-ui-font-color2': [255, 255, 255, 0.54],
    '--jp-warn-color0': [245, 124, 0, 1],
    '--jp-content-font-color1': [255, 255, 255, 0.87]
  }
};

const css = readFileSync(new URL('../style/hlo.css', import.meta.url), 'utf8');

/** the var() a rule for exactly this selector (alone or in a selector list) gives `prop` */
function varOf(selector: string, prop: string): string {
  const re = /([^{}]+)\{([^}]*)\}/g;
  let found = '';
  for (let m = re.exec(css); m; m = re.exec(css)) {
    const sels = m[1]
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .split(',')
      .map(s => s.trim());
    if (!sels.includes(selector)) {
      continue;
    }
    const d = new RegExp(
      `(?:^|;|\\s)${prop}\\s*:\\s*var\\((--[\\w-]+)\\)`
    ).exec(m[2]);
    if (d) {
      found = d[1];
    }
  }
  return found;
}

function contrast(
  fg: [number, number, number, number],
  bg: [number, number, number, number]
): number {
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

describe('hlo.css text contrast (>= 4.5:1 in JupyterLab Light and Dark)', () => {
  // [text selector, selector of the box whose background it sits on]
  const pairs: Array<[string, string]> = [
    ['.jwb-hlo-summary-label', '.jwb-hlo-summary'],
    ['.jwb-hlo-summary-value', '.jwb-hlo-summary'],
    ['.jwb-hlo-note', '.jwb-hlo']
  ];
  for (const [text, box] of pairs) {
    it(`${text} on ${box}`, () => {
      const fgVar = varOf(text, 'color');
      const bgVar = varOf(box, 'background');
      expect(fgVar).toMatch(/^--jp-/);
      expect(bgVar).toMatch(/^--jp-/);
      for (const [name, theme] of Object.entries(THEMES)) {
        expect(theme[fgVar], `${fgVar} in ${name}`).toBeDefined();
        expect(theme[bgVar], `${bgVar} in ${name}`).toBeDefined();
        expect(
          contrast(theme[fgVar], theme[bgVar]),
          `${text} in ${name}`
        ).toBeGreaterThanOrEqual(4.5);
      }
    });
  }
});
