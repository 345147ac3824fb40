/**
 * Painting a scene onto a 2D context, layer by layer, as `GraphCanvas` draws a frame:
 * the frames of expanded clusters, then the edges (with arrowheads), then the boxes, each
 * culled to the viewport.  The context already carries the view's transform, so everything
 * here is in world coordinates; `px` is one screen pixel in world units.  Also the
 * minimap's overview image.
 */

import {
  FLAG_LINKED,
  FLAG_SEARCH,
  FLAG_SELECTED,
  TITLE_PX,
  type Scene
} from './scene';
import type { Palette } from './theme';

/** The world rectangle in view, the view's scale and one screen pixel in world units. */
export interface Viewport {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  scale: number;
  px: number;
}

/** Where the minimap draws the world: scale `s`, offset (ox, oy), its size w x h. */
export interface MinimapScale {
  s: number;
  ox: number;
  oy: number;
  w: number;
  h: number;
}

/** Dashed frames of expanded clusters, labelled once the label is legible. */
export function paintFrames(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  p: Palette,
  v: Viewport
): void {
  const px = v.px;
  ctx.lineWidth = px;
  for (const fr of s.frames) {
    if (fr.x1 < v.x0 || fr.x0 > v.x1 || fr.y1 < v.y0 || fr.y0 - 18 > v.y1) {
      continue;
    }
    ctx.setLineDash([4 * px, 3 * px]);
    ctx.strokeStyle = p.border;
    ctx.strokeRect(fr.x0, fr.y0, fr.x1 - fr.x0, fr.y1 - fr.y0);
    ctx.setLineDash([]);
    if (v.scale * 12 >= 6) {
      ctx.fillStyle = p.textDim;
      ctx.font = `11px ${p.font}`;
      ctx.textBaseline = 'bottom';
      ctx.fillText(
        elide(ctx, `▾ ${fr.label}`, Math.max(40, fr.x1 - fr.x0)),
        fr.x0 + 2,
        fr.y0 - 2
      );
    }
  }
}

/**
 * Edges in view: faint edges first (parameters and constants feed everything: drawn
 * faint so the program's flow shows), then the others, one path per width (a bundled edge
 * is as wide as the bytes it carries), then the arrowheads once they are big enough to see
 * (at both ends of an edge the data crosses both ways).
 */
export function paintEdges(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  p: Palette,
  v: Viewport
): void {
  const heads: number[] = [];
  strokeEdges(ctx, s, p, v, true, 0, heads);
  for (let w = 1; w <= 4; w++) {
    strokeEdges(ctx, s, p, v, false, w, heads);
  }
  ctx.globalAlpha = 1;
  if (v.scale > 0.25) {
    paintArrowHeads(ctx, s, p, heads);
  }
}

/**
 * One path of the edges in view: the faint ones (`width` 0), or the ordinary ones of one
 * width; for ordinary edges the arrowheads' points are pushed to `heads` (tip, the point
 * before it).
 */
function strokeEdges(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  p: Palette,
  v: Viewport,
  faint: boolean,
  width: number,
  heads: number[]
): void {
  const m = s.edgeOffsets.length - 1;
  ctx.strokeStyle = p.edge;
  ctx.globalAlpha = faint ? 0.22 : 1;
  ctx.lineWidth = Math.max(v.px, 1) * (faint ? 1 : width);
  ctx.beginPath();
  for (let e = 0; e < m; e++) {
    if (
      (s.edgeFaint[e] === 1) !== faint ||
      (!faint && s.edgeWidth[e] !== width)
    ) {
      continue;
    }
    const b = 4 * e;
    if (
      s.edgeBox[b + 2] < v.x0 ||
      s.edgeBox[b] > v.x1 ||
      s.edgeBox[b + 3] < v.y0 ||
      s.edgeBox[b + 1] > v.y1
    ) {
      continue;
    }
    const k0 = s.edgeOffsets[e];
    const k1 = s.edgeOffsets[e + 1];
    ctx.moveTo(s.edgePoints[2 * k0], s.edgePoints[2 * k0 + 1]);
    for (let k = k0 + 1; k < k1; k++) {
      ctx.lineTo(s.edgePoints[2 * k], s.edgePoints[2 * k + 1]);
    }
    if (!faint) {
      heads.push(k1 - 1, k1 - 2);
      if (s.edgeBoth[e]) {
        heads.push(k0, k0 + 1);
      }
    }
  }
  ctx.stroke();
}

/** Filled arrowheads at the points `heads` names (pairs: tip, the point before it). */
function paintArrowHeads(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  p: Palette,
  heads: number[]
): void {
  ctx.fillStyle = p.edge;
  ctx.beginPath();
  const a = 5;
  for (let i = 0; i < heads.length; i += 2) {
    const k = heads[i];
    const j = heads[i + 1];
    const x = s.edgePoints[2 * k];
    const y = s.edgePoints[2 * k + 1];
    const dx = x - s.edgePoints[2 * j];
    const dy = y - s.edgePoints[2 * j + 1];
    const len = Math.hypot(dx, dy) || 1;
    const ux = dx / len;
    const uy = dy / len;
    ctx.moveTo(x, y);
    ctx.lineTo(x - a * ux - a * 0.6 * uy, y - a * uy + a * 0.6 * ux);
    ctx.lineTo(x - a * ux + a * 0.6 * uy, y - a * uy - a * 0.6 * ux);
    ctx.closePath();
  }
  ctx.fill();
}

/** The boxes in view: far out as coloured specks, closer each box in full. */
export function paintBoxes(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  p: Palette,
  v: Viewport
): void {
  const visible = boxesInView(s, v);
  if (v.scale * 40 < 12) {
    paintSpecks(ctx, s, p, visible, v.px);
    return;
  }
  const detailed = v.scale * 12 >= 6;
  for (const i of visible) {
    paintBox(ctx, s, p, i, v.px, detailed);
  }
}

/** The items whose box meets the viewport, in item order. */
function boxesInView(s: Scene, v: Viewport): number[] {
  const visible: number[] = [];
  for (let i = 0; i < s.n; i++) {
    const hw = s.w[i] / 2;
    const hh = s.h[i] / 2;
    if (
      s.x[i] + hw < v.x0 ||
      s.x[i] - hw > v.x1 ||
      s.y[i] + hh < v.y0 ||
      s.y[i] - hh > v.y1
    ) {
      continue;
    }
    visible.push(i);
  }
  return visible;
}

/**
 * Far out, boxes are a few pixels: one filled path per heat colour, outlines only for the
 * flagged ones (selected, linked, found).
 */
function paintSpecks(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  p: Palette,
  visible: number[],
  px: number
): void {
  for (let hb = 0; hb < p.heat.length; hb++) {
    ctx.fillStyle = p.heat[hb];
    ctx.beginPath();
    for (const i of visible) {
      if (s.heat[i] === hb) {
        ctx.rect(s.x[i] - s.w[i] / 2, s.y[i] - s.h[i] / 2, s.w[i], s.h[i]);
      }
    }
    ctx.fill();
  }
  for (const i of visible) {
    const f = s.flags[i];
    if (!f) {
      continue;
    }
    ctx.lineWidth = 3 * px;
    ctx.strokeStyle =
      f & FLAG_SELECTED ? p.select : f & FLAG_LINKED ? p.highlight : p.search;
    ctx.strokeRect(s.x[i] - s.w[i] / 2, s.y[i] - s.h[i] / 2, s.w[i], s.h[i]);
  }
}

/**
 * Box i in full: fill (tinted when hot), heat bar on the left, source-line stripe on the
 * right, an outline saying selected / linked / found, a second outline when folded, and,
 * when `detailed`, its two lines of text.
 */
function paintBox(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  p: Palette,
  i: number,
  px: number,
  detailed: boolean
): void {
  const x0 = s.x[i] - s.w[i] / 2;
  const y0 = s.y[i] - s.h[i] / 2;
  const w = s.w[i];
  const h = s.h[i];
  const heat = s.heat[i];
  ctx.fillStyle = s.kind[i] === 0 ? p.node : p.cluster;
  ctx.fillRect(x0, y0, w, h);
  if (heat >= 3) {
    ctx.globalAlpha = heat === 5 ? 0.3 : heat === 4 ? 0.2 : 0.12;
    ctx.fillStyle = p.heat[heat];
    ctx.fillRect(x0, y0, w, h);
    ctx.globalAlpha = 1;
  }
  // heat bar on the left
  ctx.fillStyle = p.heat[heat];
  ctx.fillRect(x0, y0, Math.min(8, w / 4), h);
  const stripe = s.stripe[i];
  if (stripe) {
    ctx.fillStyle = stripe;
    ctx.fillRect(x0 + w - 6, y0, 6, h);
  }
  const [bw, bc] = outline(s.flags[i], heat, p);
  ctx.lineWidth = Math.max(bw, bw * px);
  ctx.strokeStyle = bc;
  ctx.strokeRect(x0, y0, w, h);
  if (s.kind[i] !== 0) {
    // folded: a second outline, like a stack of boxes
    ctx.lineWidth = Math.max(1, px);
    ctx.strokeStyle = p.border;
    ctx.strokeRect(x0 + 3, y0 + 3, w, h);
  }
  if (detailed) {
    ctx.fillStyle = p.text;
    ctx.textBaseline = 'middle';
    ctx.font = `${s.kind[i] === 0 ? '12px' : `bold ${TITLE_PX}px`} ${p.font}`;
    const tx = x0 + 12;
    const tw = w - 22;
    ctx.fillText(elide(ctx, s.title[i], tw), tx, y0 + h * 0.33);
    // the second line too in font-color1: color2 is 4.2-4.4:1 on cluster boxes
    // (layout-color2) and on heat-tinted boxes, below the 4.5:1 the themes must keep
    ctx.font = `11px ${p.font}`;
    ctx.fillText(elide(ctx, s.sub[i], tw), tx, y0 + h * 0.72);
  }
}

/** measured texts, by font and width: a frame redraws the same labels */
const elided = new Map<string, string>();

/**
 * `text` cut to `width` with an ellipsis (never squeezed: a long tuple shape or while
 * label squeezed into a box is unreadable; its start, with "…", reads).
 */
export function elide(
  ctx: CanvasRenderingContext2D,
  text: string,
  width: number
): string {
  const key = `${ctx.font}|${width}|${text}`;
  const hit = elided.get(key);
  if (hit !== undefined) {
    return hit;
  }
  let out = text;
  if (ctx.measureText(text).width > width) {
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(`${text.slice(0, mid)}…`).width <= width) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    out = `${text.slice(0, lo)}…`;
  }
  if (elided.size > 20000) {
    elided.clear();
  }
  elided.set(key, out);
  return out;
}

/** A box's outline width (screen pixels) and colour: selected over linked over found. */
function outline(flags: number, heat: number, p: Palette): [number, string] {
  let bw = heat === 5 ? 2.5 : 1;
  let bc = heat === 5 ? p.heat[5] : p.border;
  if (flags & FLAG_SEARCH) {
    bc = p.search;
    bw = 3;
  }
  if (flags & FLAG_LINKED) {
    bc = p.highlight;
    bw = 3;
  }
  if (flags & FLAG_SELECTED) {
    bc = p.select;
    bw = 3.5;
  }
  return [bw, bc];
}

/** The minimap's overview: every box as a heat-coloured rectangle, on a `width` x `height` canvas. */
export function minimapImage(
  s: Scene,
  p: Palette,
  k: MinimapScale,
  dpr: number,
  width: number,
  height: number
): HTMLCanvasElement {
  const off = document.createElement('canvas');
  off.width = width;
  off.height = height;
  const oc = off.getContext('2d');
  if (!oc) {
    return off;
  }
  oc.setTransform(dpr, 0, 0, dpr, 0, 0);
  oc.fillStyle = p.node;
  oc.fillRect(0, 0, k.w, k.h);
  for (let hb = 0; hb < p.heat.length; hb++) {
    oc.fillStyle = p.heat[hb];
    oc.beginPath();
    for (let i = 0; i < s.n; i++) {
      if (s.heat[i] !== hb) {
        continue;
      }
      oc.rect(
        k.ox + (s.x[i] - s.w[i] / 2) * k.s,
        k.oy + (s.y[i] - s.h[i] / 2) * k.s,
        Math.max(1, s.w[i] * k.s),
        Math.max(1, s.h[i] * k.s)
      );
    }
    oc.fill();
  }
  return off;
}
