/**
 * The graph canvas: a 2D canvas the size of its visible box (devicePixelRatio aware), pan
 * by dragging, zoom with the wheel around the pointer (once the graph was clicked, or with
 * Ctrl/⌘, so the notebook still scrolls over it), arrow keys and +/- when focused, a fit
 * button, a minimap.  Only boxes and
 * edges in view are drawn, text only when it is legible; a frame is drawn on
 * requestAnimationFrame only after something changed, so nothing runs while idle.  Each
 * redraw is recorded as `performance.measure('jwb:hlo:frame')`.
 */

import {
  minimapImage,
  paintBoxes,
  paintEdges,
  paintFrames,
  type MinimapScale,
  type Viewport
} from './paint';
import { hitFrameTab, hitTest, type Scene } from './scene';
import { readPalette, type Palette } from './theme';

export interface CanvasEvents {
  click(item: number, ev: MouseEvent): void;
  dblclick(item: number): void;
  frameClick(frame: number): void;
  /**
   * the canvas's width changed (CSS px): a layout wrapped to the old one may not fit;
   * `whole`: the whole drawing was in view before
   */
  resized?(width: number, whole: boolean): void;
}

const MIN_SCALE = 0.02;
const MAX_SCALE = 4;

export class GraphCanvas {
  readonly canvas: HTMLCanvasElement;
  readonly minimap: HTMLCanvasElement;
  private readonly _ctx: CanvasRenderingContext2D;
  private _scene: Scene | null = null;
  private _scale = 1;
  private _tx = 0;
  private _ty = 0;
  private _cssW = 0;
  private _cssH = 0;
  private _dpr = 1;
  private _raf = 0;
  private _palette: Palette;
  private _active = false;
  private _drag: {
    x: number;
    y: number;
    tx: number;
    ty: number;
    moved: boolean;
  } | null = null;
  private _miniCache: HTMLCanvasElement | null = null;
  private _miniDrag = false;
  /** a fit asked for before the box had a size */
  private _pendingFit: [number, number] | null = null;
  private readonly _resize: ResizeObserver | null;
  private readonly _disposers: Array<() => void> = [];
  /** milliseconds of the last few redraws (for the summary's debug line and tests) */
  readonly frameTimes: number[] = [];

  constructor(
    private readonly _box: HTMLElement,
    private readonly _events: CanvasEvents
  ) {
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'jwb-hlo-canvas';
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute(
      'aria-label',
      'HLO graph: drag or arrow keys to pan; click then wheel, Ctrl+wheel or +/- to zoom; 0 fits'
    );
    this.minimap = document.createElement('canvas');
    this.minimap.className = 'jwb-hlo-minimap';
    _box.append(this.canvas, this.minimap);
    this._ctx = this.canvas.getContext('2d') as CanvasRenderingContext2D;
    this._palette = readPalette(_box);
    this._resize =
      typeof ResizeObserver !== 'undefined'
        ? new ResizeObserver(() => this._measure())
        : null;
    this._resize?.observe(_box);
    this._measure();
    this._listen();
  }

  /** the canvas's size in CSS px */
  get size(): [number, number] {
    return [this._cssW, this._cssH];
  }

  /** Take the box's size now (it may have been laid out since the last resize event). */
  remeasure(): void {
    this._measure();
  }

  /** Set the box's height (CSS px) and take the new size at once (not on the next resize). */
  setHeight(h: number): void {
    this._box.style.height = `${h}px`;
    this._measure();
  }

  /** where the world's origin is drawn on the canvas (CSS px) */
  get offset(): [number, number] {
    return [this._tx, this._ty];
  }

  get scale(): number {
    return this._scale;
  }

  setScene(scene: Scene): void {
    this._scene = scene;
    this._miniCache = null;
    this.requestDraw();
  }

  refreshPalette(): void {
    this._palette = readPalette(this._box);
    this._miniCache = null;
    this.requestDraw();
  }

  requestDraw(): void {
    if (this._raf || typeof requestAnimationFrame === 'undefined') {
      return;
    }
    this._raf = requestAnimationFrame(() => {
      this._raf = 0;
      this.draw();
    });
  }

  /**
   * Whole graph in view, but no smaller than `minScale`: then the top of the graph is
   * shown, centred on item `around` (the first box of the program's main line).
   */
  fit(minScale = 0, around = -1): void {
    const s = this._scene;
    if (!s) {
      return;
    }
    if (this._cssW <= 1 || this._cssH <= 1) {
      this._pendingFit = [minScale, around];
      return;
    }
    this._pendingFit = null;
    const pad = 16;
    const fitScale = Math.min(
      (this._cssW - 2 * pad) / Math.max(1, s.width),
      (this._cssH - 2 * pad) / Math.max(1, s.height)
    );
    const scale = Math.max(
      MIN_SCALE,
      Math.min(1, Math.max(fitScale, minScale))
    );
    if (fitScale < minScale && (around < 0 || around >= s.n) && s.n > 0) {
      // not shown whole and no box named: start at the topmost box (leftmost of its row),
      // not at the top-left corner of the drawing, which is often empty
      let top = 0;
      for (let i = 1; i < s.n; i++) {
        if (s.y[i] < s.y[top] || (s.y[i] === s.y[top] && s.x[i] < s.x[top])) {
          top = i;
        }
      }
      around = top;
    }
    this._scale = scale;
    this._tx = (this._cssW - s.width * scale) / 2;
    this._ty = fitScale >= minScale ? (this._cssH - s.height * scale) / 2 : pad;
    if (s.width * scale > this._cssW) {
      this._tx =
        around >= 0 && around < s.n
          ? this._cssW / 2 - s.x[around] * scale
          : pad;
    }
    if (fitScale < minScale && around >= 0 && around < s.n) {
      this._ty = Math.min(pad, this._cssH / 3 - s.y[around] * scale);
    }
    this.requestDraw();
  }

  /** Centre item i (zooming in to a readable scale when needed). */
  focus(i: number, minScale = 0.8): void {
    const s = this._scene;
    if (!s || i < 0 || i >= s.n) {
      return;
    }
    this._pendingFit = null;
    if (this._scale < minScale) {
      this._scale = minScale;
    }
    this._tx = this._cssW / 2 - s.x[i] * this._scale;
    this._ty = this._cssH / 2 - s.y[i] * this._scale;
    this.requestDraw();
  }

  /** the whole drawing is in view (what Fit shows) */
  wholeInView(): boolean {
    const s = this._scene;
    return (
      !!s &&
      this._tx >= -0.5 &&
      this._ty >= -0.5 &&
      this._tx + s.width * this._scale <= this._cssW + 0.5 &&
      this._ty + s.height * this._scale <= this._cssH + 0.5
    );
  }

  isVisible(i: number): boolean {
    const s = this._scene;
    if (!s) {
      return false;
    }
    const sx = s.x[i] * this._scale + this._tx;
    const sy = s.y[i] * this._scale + this._ty;
    return sx >= 0 && sx <= this._cssW && sy >= 0 && sy <= this._cssH;
  }

  dispose(): void {
    if (this._raf) {
      cancelAnimationFrame(this._raf);
    }
    this._raf = 0;
    this._resize?.disconnect();
    for (const d of this._disposers) {
      d();
    }
  }

  private _measure(): void {
    const w = Math.max(1, Math.floor(this._box.clientWidth));
    const h = Math.max(1, Math.floor(this._box.clientHeight));
    const dpr = (typeof window !== 'undefined' && window.devicePixelRatio) || 1;
    if (w === this._cssW && h === this._cssH && dpr === this._dpr) {
      return;
    }
    const widthChanged = this._cssW > 1 && w !== this._cssW;
    const whole = widthChanged && this.wholeInView();
    this._cssW = w;
    this._cssH = h;
    this._dpr = dpr;
    if (widthChanged) {
      this._events.resized?.(w, whole);
    }
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${h}px`;
    if (this._pendingFit && w > 1 && h > 1) {
      this.fit(...this._pendingFit);
    }
    this.requestDraw();
  }

  private _on<K extends keyof HTMLElementEventMap>(
    el: HTMLElement,
    type: K,
    fn: (ev: HTMLElementEventMap[K]) => void,
    opts?: AddEventListenerOptions
  ): void {
    el.addEventListener(type, fn as EventListener, opts);
    this._disposers.push(() =>
      el.removeEventListener(type, fn as EventListener, opts)
    );
  }

  private _world(ev: MouseEvent): [number, number] {
    const r = this.canvas.getBoundingClientRect();
    return [
      (ev.clientX - r.left - this._tx) / this._scale,
      (ev.clientY - r.top - this._ty) / this._scale
    ];
  }

  private _listen(): void {
    this._listenPan();
    this._listenWheel();
    this._listenKeys();
    this._listenMinimap();
  }

  /** Drag to pan; a click (no drag) or double click reports the box or frame tab under it. */
  private _listenPan(): void {
    const c = this.canvas;
    this._on(c, 'pointerdown', ev => {
      if (ev.button !== 0) {
        return;
      }
      this._active = true;
      this._drag = {
        x: ev.clientX,
        y: ev.clientY,
        tx: this._tx,
        ty: this._ty,
        moved: false
      };
      c.setPointerCapture?.(ev.pointerId);
    });
    this._on(c, 'pointermove', ev => {
      const d = this._drag;
      if (!d) {
        return;
      }
      const dx = ev.clientX - d.x;
      const dy = ev.clientY - d.y;
      if (!d.moved && Math.abs(dx) + Math.abs(dy) < 4) {
        return;
      }
      d.moved = true;
      c.classList.add('jwb-hlo-panning');
      this._tx = d.tx + dx;
      this._ty = d.ty + dy;
      this.requestDraw();
    });
    const end = (ev: PointerEvent): void => this._endDrag(ev);
    this._on(c, 'pointerup', end);
    this._on(c, 'pointercancel', end);
    this._on(c, 'pointerleave', () => {
      this._active = false;
    });
    this._on(c, 'dblclick', ev => {
      const s = this._scene;
      if (!s) {
        return;
      }
      const [wx, wy] = this._world(ev);
      const item = hitTest(s, wx, wy);
      if (item >= 0) {
        this._events.dblclick(item);
      }
    });
  }

  /** The end of a press: a drag ends; a press that did not move is a click. */
  private _endDrag(ev: PointerEvent): void {
    const d = this._drag;
    this._drag = null;
    this.canvas.classList.remove('jwb-hlo-panning');
    if (!d || d.moved || ev.type === 'pointercancel') {
      return;
    }
    const s = this._scene;
    if (!s) {
      return;
    }
    const [wx, wy] = this._world(ev);
    const f = hitFrameTab(s, wx, wy);
    const item = hitTest(s, wx, wy);
    if (item < 0 && f >= 0) {
      this._events.frameClick(f);
    } else {
      this._events.click(item, ev);
    }
  }

  /** Wheel zoom around the pointer, once the graph was clicked or with Ctrl/⌘. */
  private _listenWheel(): void {
    const c = this.canvas;
    this._on(
      c,
      'wheel',
      ev => {
        if (!this._active && !ev.ctrlKey && !ev.metaKey) {
          return;
        } // let the notebook scroll
        ev.preventDefault();
        const r = c.getBoundingClientRect();
        const factor = Math.exp(
          -ev.deltaY * (ev.deltaMode === 1 ? 0.05 : 0.0015)
        );
        this._zoomAt(ev.clientX - r.left, ev.clientY - r.top, factor);
        this.requestDraw();
      },
      { passive: false }
    );
  }

  /** Multiply the scale by `factor` (within bounds), keeping screen point (px, py) still. */
  private _zoomAt(px: number, py: number, factor: number): void {
    const ns = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this._scale * factor));
    this._tx = px - (px - this._tx) * (ns / this._scale);
    this._ty = py - (py - this._ty) * (ns / this._scale);
    this._scale = ns;
  }

  /** Arrow keys pan, +/- zoom around the centre, 0 fits. */
  private _listenKeys(): void {
    this._on(this.canvas, 'keydown', ev => {
      const step = 60;
      const zoom = (f: number): void =>
        this._zoomAt(this._cssW / 2, this._cssH / 2, f);
      switch (ev.key) {
        case 'ArrowLeft':
          this._tx += step;
          break;
        case 'ArrowRight':
          this._tx -= step;
          break;
        case 'ArrowUp':
          this._ty += step;
          break;
        case 'ArrowDown':
          this._ty -= step;
          break;
        case '+':
        case '=':
          zoom(1.25);
          break;
        case '-':
          zoom(0.8);
          break;
        case '0':
          this.fit();
          return;
        default:
          return;
      }
      ev.preventDefault();
      this.requestDraw();
    });
  }

  /** Press or drag on the minimap: centre the view there. */
  private _listenMinimap(): void {
    const mini = this.minimap;
    const jump = (ev: PointerEvent): void => {
      const s = this._scene;
      if (!s) {
        return;
      }
      const r = mini.getBoundingClientRect();
      const k = this._miniScale();
      const wx = (ev.clientX - r.left - k.ox) / k.s;
      const wy = (ev.clientY - r.top - k.oy) / k.s;
      this._tx = this._cssW / 2 - wx * this._scale;
      this._ty = this._cssH / 2 - wy * this._scale;
      this.requestDraw();
    };
    this._on(mini, 'pointerdown', ev => {
      this._miniDrag = true;
      mini.setPointerCapture?.(ev.pointerId);
      jump(ev);
    });
    this._on(mini, 'pointermove', ev => {
      if (this._miniDrag) {
        jump(ev);
      }
    });
    this._on(mini, 'pointerup', () => {
      this._miniDrag = false;
    });
  }

  private _miniScale(): MinimapScale {
    const w = this.minimap.clientWidth || 160;
    const h = this.minimap.clientHeight || 110;
    const sc = this._scene;
    if (!sc) {
      return { s: 1, ox: 0, oy: 0, w, h };
    }
    const s = Math.min(
      (w - 8) / Math.max(1, sc.width),
      (h - 8) / Math.max(1, sc.height)
    );
    return { s, ox: (w - sc.width * s) / 2, oy: (h - sc.height * s) / 2, w, h };
  }

  draw(): void {
    const t0 = performance.now();
    this._drawMain();
    this._drawMinimap();
    const t1 = performance.now();
    try {
      performance.measure('jwb:hlo:frame', { start: t0, end: t1 });
    } catch {
      // performance.measure with options needs a modern engine; timings still kept below
    }
    this.frameTimes.push(t1 - t0);
    if (this.frameTimes.length > 50) {
      this.frameTimes.shift();
    }
  }

  /** The graph: background, then frames, edges and boxes in view (see paint.ts). */
  private _drawMain(): void {
    const ctx = this._ctx;
    const p = this._palette;
    const s = this._scene;
    const dpr = this._dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = p.background;
    ctx.fillRect(0, 0, this._cssW, this._cssH);
    if (!s) {
      return;
    }
    const sc = this._scale;
    ctx.setTransform(dpr * sc, 0, 0, dpr * sc, dpr * this._tx, dpr * this._ty);
    const x0 = -this._tx / sc;
    const y0 = -this._ty / sc;
    const view: Viewport = {
      x0,
      y0,
      x1: x0 + this._cssW / sc,
      y1: y0 + this._cssH / sc,
      scale: sc,
      px: 1 / sc
    };
    paintFrames(ctx, s, p, view);
    paintEdges(ctx, s, p, view);
    paintBoxes(ctx, s, p, view);
  }

  private _drawMinimap(): void {
    const mini = this.minimap;
    const s = this._scene;
    // no minimap while the whole graph is in view
    const whole =
      !s ||
      (this._tx >= 0 &&
        this._ty >= 0 &&
        this._tx + s.width * this._scale <= this._cssW &&
        this._ty + s.height * this._scale <= this._cssH);
    if (whole !== mini.hidden) {
      mini.hidden = whole;
    }
    if (whole) {
      return;
    }
    const k = this._miniScale();
    const dpr = this._dpr;
    if (
      mini.width !== Math.round(k.w * dpr) ||
      mini.height !== Math.round(k.h * dpr)
    ) {
      mini.width = Math.round(k.w * dpr);
      mini.height = Math.round(k.h * dpr);
      this._miniCache = null;
    }
    const ctx = mini.getContext('2d');
    if (!ctx || !s) {
      return;
    }
    const p = this._palette;
    if (!this._miniCache) {
      this._miniCache = minimapImage(s, p, k, dpr, mini.width, mini.height);
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this._miniCache, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.strokeStyle = p.select;
    ctx.lineWidth = 1.5;
    const vx = (-this._tx / this._scale) * k.s + k.ox;
    const vy = (-this._ty / this._scale) * k.s + k.oy;
    ctx.strokeRect(
      vx,
      vy,
      (this._cssW / this._scale) * k.s,
      (this._cssH / this._scale) * k.s
    );
  }
}
