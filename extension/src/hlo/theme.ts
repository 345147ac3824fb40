/**
 * Colours for the canvas, read from JupyterLab's CSS variables at draw time (never
 * hard-coded), and a watcher that reports theme changes.
 */

export interface Palette {
  background: string;
  node: string;
  cluster: string;
  text: string;
  textDim: string;
  border: string;
  edge: string;
  accent: string;
  select: string;
  highlight: string;
  search: string;
  /** heat bucket 0..5 */
  heat: string[];
  font: string;
  mono: string;
}

export function readPalette(el: Element): Palette {
  const cs = getComputedStyle(el);
  const v = (name: string, fallback: string): string =>
    cs.getPropertyValue(name).trim() || fallback;
  return {
    background: v('--jp-layout-color0', 'Canvas'),
    node: v('--jp-layout-color1', 'Canvas'),
    cluster: v('--jp-layout-color2', 'Canvas'),
    text: v('--jp-ui-font-color1', 'CanvasText'),
    textDim: v('--jp-ui-font-color2', 'GrayText'),
    border: v('--jp-border-color1', 'GrayText'),
    edge: v('--jp-border-color1', 'GrayText'),
    accent: v('--jp-brand-color1', 'Highlight'),
    select: v('--jp-brand-color1', 'Highlight'),
    highlight: v('--jp-success-color1', 'Highlight'),
    search: v('--jp-info-color1', 'Highlight'),
    heat: [
      v('--jp-border-color2', 'GrayText'),
      v('--jp-border-color1', 'GrayText'),
      v('--jp-warn-color3', 'GrayText'),
      v('--jp-warn-color2', 'GrayText'),
      v('--jp-warn-color0', 'GrayText'),
      v('--jp-error-color1', 'GrayText')
    ],
    font: v('--jp-ui-font-family', 'sans-serif'),
    mono: v('--jp-code-font-family', 'monospace')
  };
}
