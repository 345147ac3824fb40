/**
 * One colour per linked source line, shared by the cell editor, the jaxpr rows and the
 * graph's nodes (as Compiler Explorer does for C++ and its assembly).
 *
 * A line's hue is its line number times the golden angle, so neighbouring lines differ and
 * a line has the same colour in every output of its cell (the jaxpr and the HLO graph of
 * one cell agree, and so does the editor they both paint).  The colour is a translucent
 * background: readable over JupyterLab's light and dark themes alike.
 */

const GOLDEN_ANGLE = 137.508;

/** The colour of source line `line` (1-based). */
export function lineColor(line: number, alpha = 0.22): string {
  const hue = Math.round((line * GOLDEN_ANGLE) % 360);
  return `hsla(${hue}, 75%, 55%, ${alpha})`;
}

/** line -> `hsla(...)` for each distinct line in `lines` (lines < 1 are left out). */
export function lineColors(lines: Iterable<number>, alpha = 0.22): Map<number, string> {
  const sorted = [...new Set(lines)].filter(l => l > 0).sort((a, b) => a - b);
  const out = new Map<number, string>();
  for (const line of sorted) out.set(line, lineColor(line, alpha));
  return out;
}
