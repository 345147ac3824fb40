/**
 * One colour per linked source line, shared by the cell editor, the jaxpr rows and the
 * graph's nodes (as Compiler Explorer does for C++ and its assembly).
 *
 * Colours come from JupyterLab's theme variables only (brand, warn, success, error, info
 * and the editor's meta colour), mixed into transparency at two strengths, so a line is
 * readable under CodeMirror's text in Light and Dark themes alike and follows a theme
 * switch without a redraw of the DOM.  A line's colour depends on its number alone: the
 * jaxpr and the HLO graph of one cell agree, and so does the editor they both paint.
 * Neighbouring lines always differ (12 slots, cycling).
 */

/** theme variables with distinct hues in JupyterLab Light and Dark */
export const LINE_PALETTE = [
  '--jp-brand-color1',
  '--jp-warn-color1',
  '--jp-success-color1',
  '--jp-error-color1',
  '--jp-mirror-editor-meta-color',
  '--jp-info-color1'
] as const;

const SLOTS = LINE_PALETTE.length * 2;

/**
 * The colour of source line `line` (1-based), a CSS colour.  `alpha` 1 gives the solid
 * theme colour (stripes, outlines); below 1 a translucent mix for backgrounds (the second
 * round of slots is 1.7 times stronger, so lines 1 and 7 differ too).
 */
export function lineColor(line: number, alpha = 0.22): string {
  const slot = ((Math.round(line) % SLOTS) + SLOTS) % SLOTS;
  const variable = LINE_PALETTE[slot % LINE_PALETTE.length];
  if (alpha >= 1) {
    return `var(${variable})`;
  }
  const strength =
    slot < LINE_PALETTE.length ? alpha : Math.min(1, alpha * 1.7);
  return `color-mix(in srgb, var(${variable}) ${Math.round(strength * 100)}%, transparent)`;
}

/** line -> colour for each distinct line in `lines` (lines < 1 are left out). */
export function lineColors(
  lines: Iterable<number>,
  alpha = 0.22
): Map<number, string> {
  const sorted = [...new Set(lines)].filter(l => l > 0).sort((a, b) => a - b);
  const out = new Map<number, string>();
  for (const line of sorted) {
    out.set(line, lineColor(line, alpha));
  }
  return out;
}

const _resolved = new Map<string, string>();

/** the theme now applied (JupyterLab marks it on <body>): part of the cache key */
function themeKey(): string {
  const d = document.body?.dataset;
  return `${d?.jpThemeName ?? ''}|${d?.jpThemeLight ?? ''}`;
}

/**
 * A CSS colour (theme variables, color-mix) as the `rgb(...)` a canvas can use, computed
 * under `host` (so the host's theme applies; under <body> while the host is outside the
 * document, as a notebook's windowing leaves cells scrolled out of view, where a browser
 * computes no style at all).  Cached per theme (so a switch made while no view watched
 * still gives the new theme's colours) until `forgetResolvedColors()`; a colour nothing
 * could resolve is returned as given and never cached.
 */
export function resolveColor(css: string, host: HTMLElement): string {
  const key = `${themeKey()}|${css}`;
  const hit = _resolved.get(key);
  if (hit !== undefined) {
    return hit;
  }
  const parent = host.isConnected ? host : document.body;
  if (!parent) {
    return css;
  }
  const probe = document.createElement('span');
  probe.style.display = 'none';
  probe.style.color = css;
  parent.appendChild(probe);
  const value = getComputedStyle(probe).color;
  probe.remove();
  if (!value) {
    return css;
  }
  _resolved.set(key, value);
  return value;
}

export function forgetResolvedColors(): void {
  _resolved.clear();
}
