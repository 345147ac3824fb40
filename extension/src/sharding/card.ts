/**
 * One layout drawn as a card: headline, summary, mesh grid, and the tiles on a canvas sized
 * to the picture (facets for higher-rank arrays).  Hovering a tile shows a tooltip built from
 * DOM (one per output, reused) and lights the devices holding that shard in the mesh grid.
 * Shared by the sharding view and the mesh explorer's view.
 */

import { add, cssVar, el } from '../common/dom';
import { fmtBytes } from '../bench/format';
import {
  dimCaption,
  layoutHeadline,
  layoutPicture,
  layoutSummary,
  MAX_LABELLED_TILES,
  devicesText,
  shardTooltip,
  tileAt,
  type DeviceSetColors,
  type Layout,
  type Picture
} from './model';

/** The colours tiles cycle through: JupyterLab's theme variables only. */
export const TILE_PALETTE = [
  '--jp-brand-color1',
  '--jp-warn-color1',
  '--jp-success-color1',
  '--jp-error-color1',
  '--jp-info-color1',
  '--jp-mirror-editor-operator-color',
  '--jp-mirror-editor-string-color',
  '--jp-mirror-editor-meta-color'
];

/** Alpha of slot `slot`'s tint: the palette's second round is lighter. */
export function tileAlpha(slot: number): number {
  return Math.floor(slot / TILE_PALETTE.length) % 2 === 0 ? 0.5 : 0.22;
}

export class Tooltip {
  readonly node: HTMLDivElement;
  constructor(root: HTMLElement) {
    this.node = add(root, el('div', 'jwb-sh-tip'));
    this.node.hidden = true;
  }
  show(title: string, lines: string[], x: number, y: number): void {
    const n = this.node;
    n.textContent = '';
    add(n, el('div', 'jwb-sh-tip-title', title));
    for (const l of lines) {
      add(n, el('div', undefined, l));
    }
    n.hidden = false;
    const root = n.offsetParent as HTMLElement | null;
    const maxX = (root?.clientWidth ?? 800) - n.offsetWidth - 4;
    const maxY = (root?.clientHeight ?? 600) - n.offsetHeight - 2;
    n.style.left = `${Math.max(0, Math.min(x + 14, maxX))}px`;
    n.style.top = `${Math.max(0, y + 14 > maxY ? y - n.offsetHeight - 8 : y + 14)}px`;
  }
  hide(): void {
    this.node.hidden = true;
  }
}

interface Drawn {
  lay: Layout;
  pic: Picture;
  canvas: HTMLCanvasElement;
  hover: number | null;
  meshCells: Map<number, HTMLElement>;
}

/** Draws layout cards for one output and redraws them on theme changes. */
interface Theme {
  palette: string[];
  bg: string;
  text: string;
  edge: string;
  hatch: string;
  accent: string;
  font: string;
}

export class LayoutCards {
  private readonly _drawn: Drawn[] = [];
  /** the theme's colours, read once (getComputedStyle forces a style pass) until the theme changes */
  private _theme: Theme | null = null;
  private _pending = false;
  private _disposed = false;
  private _observer: ResizeObserver | null = null;
  private _frame = 0;
  constructor(
    private readonly _root: HTMLElement,
    private readonly _colors: DeviceSetColors,
    private readonly _tip: Tooltip
  ) {}

  /** A card for `lay` (appended to `parent`). */
  card(parent: HTMLElement, lay: Layout, width = 360): HTMLElement {
    const card = add(parent, el('div', 'jwb-sh-card'));
    card.dataset.path = lay.path;
    add(card, el('div', 'jwb-sh-head', layoutHeadline(lay)));
    add(card, el('div', 'jwb-sh-summary', layoutSummary(lay, fmtBytes)));
    const body = add(card, el('div', 'jwb-sh-body'));
    const pic = layoutPicture(lay, this._colors, width);
    const fig = add(body, el('div', 'jwb-sh-fig'));
    if (pic.cols !== null) {
      add(
        fig,
        el('div', 'jwb-sh-cap jwb-sh-cap-cols', dimCaption(lay, pic.cols))
      );
    }
    const row = add(fig, el('div', 'jwb-sh-figrow'));
    if (pic.rows !== null) {
      add(
        row,
        el('div', 'jwb-sh-cap jwb-sh-cap-rows', dimCaption(lay, pic.rows))
      );
    }
    const canvas = add(row, el('canvas', 'jwb-sh-canvas'));
    if (pic.hiddenFacets) {
      add(
        fig,
        el(
          'div',
          'jwb-sh-note',
          `… ${pic.hiddenFacets} more blocks of the leading dimensions not drawn`
        )
      );
    }
    const meshCells = new Map<number, HTMLElement>();
    if (lay.mesh && lay.mesh.device_ids.length <= 256) {
      add(body, meshGrid(lay, meshCells));
    }
    for (const n of lay.notes) {
      add(card, el('div', 'jwb-sh-note', `note: ${n}`));
    }
    const d: Drawn = { lay, pic, canvas, hover: null, meshCells };
    this._drawn.push(d);
    this._schedule(d);
    canvas.addEventListener('mousemove', ev => this._move(d, ev));
    canvas.addEventListener('mouseleave', () => this._leave(d));
    return card;
  }

  /**
   * Mark each mesh cell with the index of the device group holding it (a collective's replica
   * groups), or clear the marks (`null`): the groups show as coloured outlines in every card.
   */
  markGroups(groups: number[][] | null): void {
    const groupOf = new Map<number, number>();
    (groups ?? []).forEach((g, k) => g.forEach(d => groupOf.set(d, k)));
    for (const d of this._drawn) {
      for (const [id, cell] of d.meshCells) {
        const k = groupOf.get(id);
        if (k === undefined) {
          delete cell.dataset.group;
        } else {
          cell.dataset.group = String(k % 4);
        }
      }
    }
  }

  redrawAll(): void {
    if (this._disposed) {
      return;
    }
    this._theme = null;
    for (const d of this._drawn) {
      this._draw(d);
    }
  }

  private readonly _queue: Drawn[] = [];
  private readonly _waiting: (() => void)[] = [];

  /** Call `cb` once every card made so far is drawn. */
  whenDrawn(cb: () => void): void {
    if (!this._pending) {
      cb();
    } else {
      this._waiting.push(cb);
    }
  }

  /**
   * Draw once the card is in the document (JupyterLab may render before attaching, and a
   * windowed notebook detaches cells scrolled out of view).  While detached nothing polls:
   * a ResizeObserver says when the output gets a box (rendered, in the document); without
   * one (old browsers, tests) frames are polled.  `dispose` stops either.
   */
  private _schedule(d: Drawn): void {
    this._queue.push(d);
    if (this._pending || this._disposed) {
      return;
    }
    this._pending = true;
    if (this._root.isConnected) {
      queueMicrotask(() => this._flush());
      return;
    }
    if (typeof ResizeObserver !== 'undefined') {
      this._observer = new ResizeObserver(() => {
        if (this._root.isConnected) {
          this._flush();
        }
      });
      this._observer.observe(this._root);
      return;
    }
    const poll = (): void => {
      this._frame = 0;
      if (this._disposed) {
        return;
      }
      if (this._root.isConnected) {
        this._flush();
      } else {
        this._frame = requestAnimationFrame(poll);
      }
    };
    this._frame = requestAnimationFrame(poll);
  }

  private _flush(): void {
    this._observer?.disconnect();
    this._observer = null;
    if (this._disposed || !this._pending) {
      return;
    }
    this._pending = false;
    const batch = this._queue.splice(0);
    for (const q of batch) {
      this._draw(q);
    }
    for (const cb of this._waiting.splice(0)) {
      cb();
    }
  }

  /** Stop waiting to draw (the output was replaced or disposed) and forget the cards. */
  dispose(): void {
    this._disposed = true;
    this._observer?.disconnect();
    this._observer = null;
    if (this._frame) {
      cancelAnimationFrame(this._frame);
    }
    this._frame = 0;
    this._queue.length = 0;
    this._waiting.length = 0;
    this._drawn.length = 0;
  }

  private _themeColors(): Theme {
    if (this._theme) {
      return this._theme;
    }
    const host = this._root;
    const brand = cssVar(host, '--jp-brand-color1');
    this._theme = {
      palette: TILE_PALETTE.map(v => cssVar(host, v, brand)),
      bg: cssVar(host, '--jp-layout-color0'),
      text: cssVar(host, '--jp-ui-font-color1'),
      edge: cssVar(host, '--jp-ui-font-color2'),
      hatch: cssVar(host, '--jp-ui-font-color3'),
      accent: brand,
      font: cssVar(host, '--jp-code-font-family', 'monospace')
    };
    return this._theme;
  }

  clear(): void {
    this._drawn.length = 0;
  }

  private _move(d: Drawn, ev: MouseEvent): void {
    const r = d.canvas.getBoundingClientRect();
    const t = tileAt(d.pic, ev.clientX - r.left, ev.clientY - r.top);
    const hover = t ? t.shard : null;
    if (hover !== d.hover) {
      d.hover = hover;
      this._draw(d);
      for (const c of d.meshCells.values()) {
        c.classList.remove('jwb-sh-on');
      }
      if (hover !== null) {
        for (const id of d.lay.shards[hover].devices) {
          d.meshCells.get(id)?.classList.add('jwb-sh-on');
        }
      }
      d.canvas.dataset.hover = hover === null ? '' : String(hover);
    }
    if (hover === null) {
      this._tip.hide();
      return;
    }
    const tip = shardTooltip(d.lay, hover, fmtBytes);
    const root = this._root.getBoundingClientRect();
    this._tip.show(
      tip.title,
      tip.lines,
      ev.clientX - root.left,
      ev.clientY - root.top
    );
  }

  private _leave(d: Drawn): void {
    this._tip.hide();
    if (d.hover !== null) {
      d.hover = null;
      this._draw(d);
      for (const c of d.meshCells.values()) {
        c.classList.remove('jwb-sh-on');
      }
    }
  }

  private _draw(d: Drawn): void {
    const { pic, canvas, lay } = d;
    const dpr = window.devicePixelRatio || 1;
    const W = Math.ceil(pic.width + 2);
    const H = Math.ceil(pic.height + 2);
    if (canvas.width !== W * dpr || canvas.height !== H * dpr) {
      canvas.width = W * dpr;
      canvas.height = H * dpr;
      canvas.style.width = `${W}px`;
      canvas.style.height = `${H}px`;
    }
    const ctx = canvas.getContext('2d');
    if (!ctx) {
      return;
    }
    if (!this._root.isConnected) {
      return;
    }
    const { palette, bg, text, edge, hatch, accent, font } =
      this._themeColors();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.translate(1, 1);
    const labelled = lay.shards.length <= MAX_LABELLED_TILES;
    const hoverSlot =
      d.hover === null
        ? -1
        : (d.pic.facets.flatMap(f => f.tiles).find(t => t.shard === d.hover)
            ?.color ?? -1);
    ctx.font = `11px ${font}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    for (const f of pic.facets) {
      if (f.label) {
        ctx.fillStyle = text;
        ctx.textAlign = 'left';
        ctx.fillText(f.label, f.x, f.y - 8);
        ctx.textAlign = 'center';
      }
      ctx.fillStyle = bg;
      ctx.fillRect(f.x, f.y, f.w, f.h);
      for (const t of f.tiles) {
        const colour = palette[t.color % palette.length];
        ctx.fillStyle = colour;
        if (t.bw > t.w || t.bh > t.h) {
          // padding: the whole block lightly tinted, then hatched
          ctx.globalAlpha = 0.12;
          ctx.fillRect(t.bx, t.by, t.bw, t.bh);
          ctx.globalAlpha = 1;
          ctx.save();
          ctx.beginPath();
          ctx.rect(t.bx, t.by, t.bw, t.bh);
          ctx.clip();
          ctx.strokeStyle = hatch;
          ctx.lineWidth = 1;
          ctx.beginPath();
          for (let k = -t.bh; k < t.bw; k += 6) {
            ctx.moveTo(t.bx + k, t.by + t.bh);
            ctx.lineTo(t.bx + k + t.bh, t.by);
          }
          ctx.stroke();
          ctx.restore();
          ctx.fillStyle = colour;
        }
        if (t.w > 0 && t.h > 0) {
          ctx.globalAlpha = tileAlpha(t.color);
          ctx.fillRect(t.x, t.y, t.w, t.h);
          ctx.globalAlpha = 1;
        }
        const lit = t.shard === d.hover;
        const same = !lit && t.color === hoverSlot;
        ctx.strokeStyle = lit || same ? accent : edge;
        ctx.lineWidth = lit
          ? 2.5
          : same
            ? 1.5
            : lay.shards.length > MAX_LABELLED_TILES
              ? 0.3
              : 0.8;
        ctx.setLineDash(same ? [4, 3] : []);
        ctx.strokeRect(t.bx, t.by, t.bw, t.bh);
        ctx.setLineDash([]);
        if (labelled) {
          const label = devicesText(lay.shards[t.shard].devices, 4);
          const wdt = ctx.measureText(label).width;
          const bw = t.w > wdt + 4 && t.h > 13 ? t.w : t.bw;
          const bh = t.w > wdt + 4 && t.h > 13 ? t.h : t.bh;
          if (bw > wdt + 4 && bh > 13) {
            ctx.fillStyle = text;
            ctx.fillText(label, t.bx + bw / 2, t.by + bh / 2);
          }
        }
      }
    }
  }
}

/** The mesh as a grid of device ids: rows over the leading axes, columns over the last. */
function meshGrid(lay: Layout, cells: Map<number, HTMLElement>): HTMLElement {
  const mesh = lay.mesh!;
  const box = el('div', 'jwb-sh-mesh');
  const names = mesh.axis_names;
  const sizes = mesh.axis_sizes;
  add(
    box,
    el(
      'div',
      'jwb-sh-mesh-title',
      `mesh ${names.map((a, i) => `${a}=${sizes[i]}${mesh.axis_types[i] && mesh.axis_types[i] !== 'Auto' ? ` (${mesh.axis_types[i]})` : ''}`).join(' × ')}`
    )
  );
  const cols = sizes.length ? sizes[sizes.length - 1] : 1;
  const rows = Math.max(1, mesh.device_ids.length / Math.max(1, cols));
  const table = add(box, el('table', 'jwb-sh-mesh-grid'));
  const head = add(table, el('tr'));
  add(
    head,
    el(
      'th',
      undefined,
      names.length > 1
        ? `${names.slice(0, -1).join(',')} \\ ${names[names.length - 1]}`
        : ''
    )
  );
  for (let c = 0; c < cols; c++) {
    add(head, el('th', undefined, String(c)));
  }
  const lead = sizes.slice(0, -1);
  for (let r = 0; r < rows; r++) {
    const tr = add(table, el('tr'));
    const coords: number[] = [];
    let rem = r;
    for (let k = lead.length - 1; k >= 0; k--) {
      coords.unshift(rem % lead[k]);
      rem = Math.floor(rem / lead[k]);
    }
    add(tr, el('th', undefined, coords.join(',')));
    for (let c = 0; c < cols; c++) {
      const id = mesh.device_ids[r * cols + c];
      const td = add(tr, el('td', undefined, String(id)));
      td.dataset.device = String(id);
      cells.set(id, td);
    }
  }
  return box;
}
