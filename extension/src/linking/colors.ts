/**
 * One colour per linked source line, shared by the cell editor, the jaxpr rows and the
 * graph's nodes (as Compiler Explorer does for C++ and its assembly).
 *
 * Lines get hues spread by the golden angle in the order of their line numbers, so
 * neighbouring lines differ and the same program always gets the same colours.  The colour
 * is a translucent background: readable over JupyterLab's light and dark themes alike.
 */

const GOLDEN_ANGLE = 137.508;

/** line -> `hsla(...)` for each distinct line in `lines`. */
export function lineColors(lines: Iterable<number>, alpha = 0.22): Map<number, string> {
  const sorted = [...new Set(lines)].filter(l => l > 0).sort((a, b) => a - b);
  const out = new Map<number, string>();
  sorted.forEach((line, i) => {
    const hue = Math.round((i * GOLDEN_ANGLE) % 360);
    out.set(line, `hsla(${hue}, 75%, 55%, ${alpha})`);
  });
  return out;
}
