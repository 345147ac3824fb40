/**
 * The interactive HLO / fusion-graph view (`application/vnd.jax-workbench.hlo+json`).
 *
 * Summary strip; toolbar (sub-graph breadcrumb, search, fit, expand all, colour legend);
 * the canvas graph (clusters by op_name scope, laid out in a worker) with a details pane;
 * the top-N heaviest fusions.  Selecting a node publishes its source lines to the
 * source-line hub; a line selected elsewhere lights the nodes it made.
 *
 * The parts around the graph are built in sections.ts, the details pane in details.ts,
 * the boxes' flags and stripes in highlight.ts; this class holds the state that ties them
 * together: the graphs shown, the selection, the search, the hub's selection.
 */

import type { CellMap } from '../common/cells';
import { el, onThemeChange } from '../common/dom';
import type { FeatureView, RenderContext } from '../common/featureView';
import { forgetResolvedColors, lineColors } from '../sourcelines/colors';
import { HUB, type LineSelection } from '../sourcelines/hub';
import { GraphCanvas } from './canvas';
import { showCluster, showNode } from './details';
import { flagScene, stripeOf } from './highlight';
import { LayoutClient } from './layoutClient';
import { FIT_READABLE, GraphModel, LEVEL_BUDGET, LONG_EDGE } from './model';
import { TITLE_PX, type Scene } from './scene';
import { NodeSearch } from './search';
import {
  collectivesTable,
  graphTitles,
  renderCrumbs,
  summaryStrip,
  toolbar,
  topTable
} from './sections';
import { linesByCell, nodesForSelection } from './sources';
import { HloText } from './text';
import {
  fileStem,
  isCut,
  textActions,
  type TextSize
} from '../common/textActions';
import type { HloNode, UnpackedHloPayload as HloPayload } from './types';
import type { VisibleGraph } from './visible';

/** the graph box's height (CSS px; hlo.css), and the most it grows to for a readable fit */
const GRAPH_H = 460;

/** how long the output's width must stay put before the drawing is wrapped to it again */
const RESIZE_MS = 250;

/** the name of the root element's function that returns `HloView.drawing()` */
export const DRAWING_ACCESSOR = 'jwbHloDrawing';

/** A box drawn: a node (its instruction id) or a folded cluster (its name, index, half). */
export type DrawnBox =
  | { kind: 'node'; label: string }
  | {
      kind: string;
      label: string;
      name: string;
      index: number | null;
      dir: string | null;
    };

/**
 * What an %hlo output's graph draws, for what cannot see its canvas (the browser tests,
 * assistive tooling): world coordinates are the layout's pixels, the screen's are
 * `offset + scale x world` (CSS px, from the canvas's top-left corner).
 */
export interface HloDrawing {
  /** the computation drawn, its title, and the title of each computation */
  graph: string;
  title: string;
  titles: Record<string, string>;
  /** the whole drawing is in view */
  whole: boolean;
  boxes: DrawnBox[];
  /** the labels of the open clusters (drawn as frames or not) */
  frames: string[];
  /** the frames drawn: [label, x0, y0, x1, y1] (world) */
  drawnFrames: Array<[string, number, number, number, number]>;
  /** the edges drawn, as [box, box] */
  edges: Array<[number, number]>;
  scale: number;
  offset: [number, number];
  /** a folded box's title height (world px): on screen scale x titlePx */
  titlePx: number;
  /** the canvas's CSS size */
  size: [number, number];
  /** each box's [x0, y0, x1, y1] (world) */
  rects: Array<[number, number, number, number]>;
}
const GRAPH_MAX_H = 720;

interface GraphState {
  model: GraphModel;
  scene: Scene | null;
  /**
   * the boxes `scene` draws: the model's visible graph when that scene was laid out.  Until
   * a pending layout arrives the canvas still shows these, so clicks, flags and focus read
   * item numbers against them, never against the model's newer drawing.
   */
  drawn: VisibleGraph | null;
  search: NodeSearch;
}

export class HloView implements FeatureView {
  private _root: HTMLElement | null = null;
  private _payload!: HloPayload;
  private _ctx!: RenderContext;
  private _cells: CellMap = {};
  private _text = new HloText('');
  private readonly _layout: LayoutClient;
  private _canvas: GraphCanvas | null = null;
  private readonly _graphs = new Map<string, GraphState>();
  private _current = '';
  private _path: string[] = [];
  private _selected = -1;
  private _linked = new Set<number>();
  /** the line selection from elsewhere that `_linked` shows (re-read for each graph shown) */
  private _linkSel: LineSelection | null = null;
  private _matches: number[] = [];
  private _matchCursor = -1;
  private _disposers: Array<() => void> = [];
  private _firstDrawn = false;
  /** the canvas width the last layout was wrapped to, and the pending re-layout on resize */
  private _wrappedTo = 0;
  private _resizeTimer: ReturnType<typeof setTimeout> | undefined;
  private _wholeBeforeResize: boolean | null = null;
  /** each computation's name as shown: a body by the user code that made it */
  private _titles = new Map<string, string>();
  // DOM
  private _details!: HTMLElement;
  private _crumbs!: HTMLElement;
  private _search!: HTMLInputElement;
  private _searchCount!: HTMLElement;
  private _expandAll!: HTMLButtonElement;
  private _status!: HTMLElement;
  private _graphBox!: HTMLElement;

  /** `workerSource`: the bundled layout worker ('' lays out on the main thread) */
  constructor(workerSource: string) {
    this._layout = new LayoutClient(workerSource);
  }

  render(
    host: HTMLElement,
    payload: unknown,
    ctx: RenderContext
  ): Promise<void> {
    this._teardown();
    this._payload = payload as HloPayload;
    this._ctx = ctx;
    this._cells = ctx.cells ?? {};
    const text = ctx.bundle['text/plain'];
    const size = this._payload.text_size as TextSize | undefined;
    this._text = new HloText(
      typeof text === 'string' ? text : '',
      isCut(size) && size ? size.shown_lines : undefined
    );
    host.textContent = '';
    const root = el('div', 'jwb-hlo');
    root.setAttribute('data-highlighted', '0');
    this._root = root;
    // the canvas has no DOM of its boxes: what it draws is read through this accessor
    // (a copy each call, read-only: see HloDrawing)
    Object.defineProperty(root, DRAWING_ACCESSOR, {
      value: (): HloDrawing | null => this.drawing(),
      configurable: true
    });
    host.appendChild(root);
    root.appendChild(summaryStrip(this._payload));
    root.appendChild(
      textActions(
        text,
        size,
        'HLO text',
        `${fileStem(this._payload.label)}.hlo.txt`
      )
    );
    const collectives = collectivesTable(this._payload, this._cells);
    if (collectives) {
      root.appendChild(collectives);
    }
    const names = Object.keys(this._payload.graphs ?? {});
    if (this._payload.parse_error || names.length === 0) {
      this._renderText(root, typeof text === 'string' ? text : '');
      ctx.interactive();
      return Promise.resolve();
    }
    this._titles = graphTitles(this._payload, this._cells);
    this._renderGraphArea(root, names[0]);
    this._publishColors();
    return this._show(names[0]);
  }

  dispose(): void {
    this._teardown();
    this._layout.dispose();
  }

  private _teardown(): void {
    clearTimeout(this._resizeTimer);
    if (this._ctx) {
      HUB.release(this._ctx.outputId);
    }
    for (const d of this._disposers) {
      d();
    }
    this._disposers = [];
    this._canvas?.dispose();
    this._canvas = null;
    this._graphs.clear();
    this._selected = -1;
    this._linked.clear();
    this._linkSel = null;
    this._matches = [];
    this._firstDrawn = false;
    this._path = [];
  }

  // ---- structure ---------------------------------------------------------------------

  /** No graph to draw (unreadable text, or none at this stage): a note and the text. */
  private _renderText(root: HTMLElement, text: string): void {
    const note = el(
      'div',
      'jwb-hlo-note',
      this._payload.parse_error
        ? `The HLO text could not be read (${this._payload.parse_error}); showing it as text.`
        : `No graph at the ${this._payload.stage} stage; showing the module text.`
    );
    const pre = el('pre', 'jwb-hlo-text', text);
    root.append(note, pre);
  }

  /**
   * Toolbar, graph with its details pane, status line and top table; then the canvas and
   * the listeners (theme, hub) that go with this render.
   */
  private _renderGraphArea(root: HTMLElement, entry: string): void {
    root.appendChild(this._toolbar());
    const main = el('div', 'jwb-hlo-main');
    this._graphBox = el('div', 'jwb-hlo-graph');
    this._details = el('div', 'jwb-hlo-details');
    this._details.appendChild(
      el(
        'div',
        'jwb-hlo-hint',
        "Click a box for its HLO text and source lines; click a folded box (▸) to open it, its dashed frame's title to fold it. Drag to pan; click the graph, then use the wheel to zoom (or Ctrl+wheel)."
      )
    );
    main.append(this._graphBox, this._details);
    root.appendChild(main);
    this._status = el('div', 'jwb-hlo-status');
    root.appendChild(this._status);
    root.appendChild(
      topTable(
        this._payload,
        entry,
        this._cells,
        id => void this._focusNode(entry, id)
      )
    );
    this._canvas = new GraphCanvas(this._graphBox, {
      click: item => this._clickItem(item),
      dblclick: item => this._openBodyOf(item),
      frameClick: f => this._toggleFrame(f),
      resized: (w, whole) => this._onResize(w, whole)
    });
    this._disposers.push(
      onThemeChange(() => {
        forgetResolvedColors();
        this._refreshStripes();
        this._canvas?.refreshPalette();
      })
    );
    this._disposers.push(HUB.onSelect(sel => this._onHubSelect(sel)));
    this._disposers.push(HUB.onColor(c => this._onHubColor(c.cell)));
  }

  private _toolbar(): HTMLElement {
    const t = toolbar({
      search: () => this._runSearch(),
      nextMatch: step => this._nextMatch(step),
      fit: () => this._canvas?.fit(),
      expandAll: () => {
        const st = this._state();
        const opened = st.model.openLevel();
        if (!opened) {
          st.model.collapseAll();
        }
        // a level opened is hundreds of boxes: shown at a readable scale from its top
        // (scroll or Fit for the whole); folded back, the first view is shown whole
        void this._relayout(opened ? 'readable' : true);
      }
    });
    this._crumbs = t.crumbs;
    this._search = t.search;
    this._searchCount = t.searchCount;
    this._expandAll = t.expandAll;
    return t.bar;
  }

  private _renderCrumbs(): void {
    renderCrumbs(
      this._crumbs,
      Object.keys(this._payload.graphs),
      this._path,
      this._current,
      name => void this._show(name),
      this._titles
    );
  }

  // ---- graphs ------------------------------------------------------------------------

  private _state(name = this._current): GraphState {
    let st = this._graphs.get(name);
    if (!st) {
      const model = new GraphModel(this._payload, name);
      st = {
        model,
        scene: null,
        drawn: null,
        search: new NodeSearch(model.g.nodes, model.g.opNames, this._cells)
      };
      this._graphs.set(name, st);
    }
    return st;
  }

  private async _show(name: string): Promise<void> {
    if (!this._payload.graphs[name]) {
      return;
    }
    this._path = this._pathTo(name);
    this._current = name;
    this._selected = -1;
    this._root?.setAttribute('data-current-graph', name);
    this._root?.removeAttribute('data-selected');
    this._renderCrumbs();
    this._relink();
    this._runSearch(false);
    await this._relayout(true);
  }

  /** The breadcrumb path to `name`: through the computation that calls it when known. */
  private _pathTo(name: string): string[] {
    const entry = Object.keys(this._payload.graphs)[0];
    if (name === entry) {
      return [entry];
    }
    const at = this._path.indexOf(name);
    if (at >= 0) {
      return this._path.slice(0, at + 1);
    }
    // a body: path through the computation that calls it when known
    const caller = this._callerOf(name);
    const base =
      caller && this._path.includes(caller)
        ? this._path.slice(0, this._path.indexOf(caller) + 1)
        : [entry];
    return [...base, name];
  }

  private _callerOf(name: string): string | null {
    for (const [g, graph] of Object.entries(this._payload.graphs)) {
      if (graph.nodes.some(n => n.called?.includes(name))) {
        return g;
      }
    }
    return null;
  }

  /**
   * Lay the drawing out and show it: `fit` true fits it whole, 'readable' fits it whole
   * when that is at a readable scale and else shows its top at one; false keeps the view.
   * The graph box grows (GRAPH_H up to GRAPH_MAX_H) when the drawing reads whole in a
   * taller box, and the layout wraps a tall drawing into bands to fit the box's width.
   */
  private async _relayout(
    fit: boolean | 'readable',
    focusNode = -1
  ): Promise<void> {
    const name = this._current;
    const st = this._state(name);
    const model = st.model;
    this._root?.setAttribute('data-visible-nodes', String(model.visibleCount));
    this._updateExpandAll(model);
    this._status.textContent = `laying out ${model.visibleCount} boxes…`;
    const vg = model.vg;
    const cssW = await this._canvasWidth();
    this._wrappedTo = cssW;
    const r = await this._layout.layout(model.layoutInput(), {
      nodeSep: 16,
      rankSep: 24,
      maxSpan: LONG_EDGE,
      viewport:
        cssW > 1
          ? { width: cssW, height: GRAPH_MAX_H, minScale: FIT_READABLE }
          : undefined
    });
    if (!r || name !== this._current || !this._canvas || model.vg !== vg) {
      return;
    }
    if (fit && cssW > 1) {
      this._fitHeight(r.width, r.height, cssW);
    }
    st.scene = model.scene(r, k => this._stripe(vg, model, k));
    st.drawn = vg;
    this._applyFlags();
    this._canvas.setScene(st.scene);
    const clusters = model.tree.clusters.length;
    this._status.textContent =
      `${model.g.nodes.length} instructions in ${name}, ${model.visibleCount} boxes shown` +
      (clusters
        ? ` (${clusters} cluster${clusters === 1 ? '' : 's'} by op_name scope; ▸ opens one)`
        : '') +
      (model.vg.implied
        ? ` · ${model.vg.implied} edge${model.vg.implied === 1 ? '' : 's'} implied by longer paths not drawn`
        : '') +
      ` · layout ${this._layout.lastMs.toFixed(0)} ms`;
    if (focusNode >= 0) {
      this._canvas.focus(vg.rep[focusNode]);
    } else if (fit === 'readable') {
      // from the top of the program's flow (its first linked box, not a row of groups)
      let top = -1;
      for (const k of [...vg.src, ...vg.dst]) {
        if (
          top < 0 ||
          r.y[k] < r.y[top] ||
          (r.y[k] === r.y[top] && r.x[k] < r.x[top])
        ) {
          top = k;
        }
      }
      this._canvas.fit(FIT_READABLE, top);
    } else if (fit) {
      // the whole graph: the first view is folded to a few dozen boxes to be seen whole
      this._canvas.fit();
    }
    // the first drawing of this render (not merely the first layout asked for: that one
    // may have been replaced before it arrived) makes the output usable
    this._drawn();
  }

  /**
   * The output was resized: once it has settled (RESIZE_MS), the drawing is laid out again
   * when its bands were wrapped to another width (a wider output fits more side by side,
   * a narrower one fewer), fitted whole again when it was.
   */
  private _onResize(width: number, whole: boolean): void {
    clearTimeout(this._resizeTimer);
    // whether it was whole before the first of a burst of resizes
    this._wholeBeforeResize ??= whole;
    this._resizeTimer = setTimeout(() => {
      const fit = this._wholeBeforeResize ?? false;
      this._wholeBeforeResize = null;
      const st = this._graphs.get(this._current);
      if (!st?.scene || Math.abs(width - this._wrappedTo) < 24) {
        return;
      }
      void this._relayout(fit);
    }, RESIZE_MS);
  }

  /**
   * The canvas's width, once it has one (the output may not be in the page yet when the
   * first layout is asked for; a few frames at most), 0 when it never gets one.
   */
  private async _canvasWidth(): Promise<number> {
    for (let i = 0; i < 30; i++) {
      const [w] = this._canvas?.size ?? [0, 0];
      if (w > 1 || typeof requestAnimationFrame === 'undefined') {
        return w > 1 ? w : 0;
      }
      this._canvas?.remeasure();
      await new Promise(res => requestAnimationFrame(res));
    }
    return 0;
  }

  /**
   * The graph box's height: GRAPH_H, or taller (up to GRAPH_MAX_H) when the whole drawing
   * then fits at a readable scale (a 24-block ladder does at about 700 px, not at 460).
   */
  private _fitHeight(width: number, height: number, cssW: number): void {
    // the scale the whole drawing is fitted at in the tallest box (canvas.fit's padding)
    const s = Math.min(
      1,
      (cssW - 32) / Math.max(1, width),
      (GRAPH_MAX_H - 32) / Math.max(1, height)
    );
    const h =
      s >= FIT_READABLE
        ? Math.min(GRAPH_MAX_H, Math.max(GRAPH_H, Math.ceil(height * s + 32)))
        : GRAPH_H;
    this._canvas?.setHeight(h);
    if (this._details) {
      this._details.style.height = `${h}px`;
    }
  }

  /**
   * The button opens the next level (within a box budget, never thousands of boxes at
   * once); with nothing more to open it folds back to the first view.
   */
  private _updateExpandAll(model: GraphModel): void {
    const more = model.canOpenLevel();
    const back = !more && !model.atInitial;
    this._expandAll.textContent = back ? 'Collapse' : 'Open a level';
    this._expandAll.disabled = !more && !back;
    this._expandAll.title = more
      ? `open the folded boxes one level (up to ${LEVEL_BUDGET} boxes)`
      : back
        ? 'fold back to the first view'
        : 'nothing more opens within the box budget: click a box to open it';
  }

  /** first layout drawn: the output can be used */
  private _drawn(): void {
    if (this._firstDrawn) {
      return;
    }
    this._firstDrawn = true;
    const done = (): void => this._ctx.interactive();
    if (typeof requestAnimationFrame === 'undefined') {
      done();
    } else {
      requestAnimationFrame(() => {
        this._canvas?.draw();
        done();
      });
    }
  }

  /**
   * What the graph draws now (null before its first layout): a fresh copy, so reading it
   * changes nothing.  Exposed on the output's root element as `jwbHloDrawing()`.
   */
  drawing(): HloDrawing | null {
    const st = this._graphs.get(this._current);
    const vg = st?.drawn;
    if (!st || !vg) {
      return null;
    }
    const tree = st.model.tree;
    const sc = st.scene;
    const rect = (k: number): [number, number, number, number] =>
      sc
        ? [
            sc.x[k] - sc.w[k] / 2,
            sc.y[k] - sc.h[k] / 2,
            sc.x[k] + sc.w[k] / 2,
            sc.y[k] + sc.h[k] / 2
          ]
        : [0, 0, 0, 0];
    return {
      graph: this._current,
      title: this._titles.get(this._current) ?? this._current,
      titles: Object.fromEntries(this._titles),
      whole: this._canvas?.wholeInView() ?? false,
      boxes: vg.items.map((it): DrawnBox => {
        if (it.kind === 'node') {
          return { kind: 'node', label: st.model.g.nodes[it.ref].id };
        }
        const c = tree.clusters[it.ref];
        return {
          kind: c.kind,
          label: c.label,
          name: c.name,
          index: c.index,
          dir: c.dir
        };
      }),
      frames: vg.frames.map(f => tree.clusters[f.cluster].label),
      drawnFrames: (sc?.frames ?? []).map(f => [
        f.label,
        f.x0,
        f.y0,
        f.x1,
        f.y1
      ]),
      edges: Array.from(vg.src, (s, e): [number, number] => [s, vg.dst[e]]),
      scale: this._canvas?.scale ?? 0,
      offset: this._canvas?.offset ?? [0, 0],
      titlePx: TITLE_PX,
      size: this._canvas?.size ?? [0, 0],
      rects: sc ? Array.from({ length: sc.n }, (_, k) => rect(k)) : []
    };
  }

  // ---- flags: selection, linked lines, search ------------------------------------------

  private _applyFlags(): void {
    const st = this._graphs.get(this._current);
    const s = st?.scene;
    const vg = st?.drawn;
    if (!st || !s || !vg) {
      return;
    }
    flagScene(s, vg, {
      linked: this._linked,
      matches: this._matches,
      selected: this._selected
    });
    this._canvas?.requestDraw();
  }

  private _stripe(
    vg: VisibleGraph,
    model: GraphModel,
    item: number
  ): string | null {
    return stripeOf(vg, model, item, this._cells, this._graphBox);
  }

  private _publishColors(): void {
    const nodes: HloNode[] = [];
    for (const g of Object.values(this._payload.graphs)) {
      nodes.push(...g.nodes);
    }
    for (const [cell, lines] of linesByCell(this._cells, nodes)) {
      HUB.color({ cell, colors: lineColors(lines) }, this._ctx.outputId);
    }
  }

  private _onHubColor(cell: string): void {
    const st = this._graphs.get(this._current);
    if (!st?.scene || !st.drawn) {
      return;
    }
    const cells = linesByCell(this._cells, st.model.g.nodes);
    if (!cells.has(cell)) {
      return;
    }
    this._restripe(st);
  }

  /** Stripes again from the hub's colours (a theme switch re-resolves them for the canvas). */
  private _refreshStripes(): void {
    const st = this._graphs.get(this._current);
    if (!st?.scene || !st.drawn) {
      return;
    }
    this._restripe(st);
  }

  private _restripe(st: GraphState): void {
    const drawn = st.drawn as VisibleGraph;
    (st.scene as Scene).stripe = drawn.items.map((_, k) =>
      this._stripe(drawn, st.model, k)
    );
    this._canvas?.requestDraw();
  }

  /** `_linked` from the last outside line selection, for the graph shown now */
  private _relink(): void {
    const st = this._current ? this._state() : null;
    const sel = this._linkSel;
    this._linked = new Set(
      st && sel ? nodesForSelection(this._cells, st.model.g.nodes, sel) : []
    );
    this._root?.setAttribute('data-highlighted', String(this._linked.size));
  }

  private _onHubSelect(sel: LineSelection | null): void {
    if (sel && sel.origin === 'hlo') {
      return;
    }
    this._linkSel = sel;
    const st = this._graphs.get(this._current);
    if (!st) {
      return;
    }
    this._relink();
    this._applyFlags();
    if (sel?.reveal && this._linked.size && this._canvas) {
      const first = Math.min(...this._linked);
      const k = st.drawn ? st.drawn.rep[first] : -1;
      if (k >= 0 && !this._canvas.isVisible(k)) {
        this._canvas.focus(k, this._canvas.scale);
      }
    }
  }

  private _runSearch(focus = true): void {
    const st =
      this._graphs.get(this._current) ?? (this._current ? this._state() : null);
    const q = this._search.value;
    this._matches = st && q.trim() ? st.search.find(q) : [];
    this._matchCursor = -1;
    this._searchCount.textContent = q.trim()
      ? `${this._matches.length} match${this._matches.length === 1 ? '' : 'es'}`
      : '';
    this._applyFlags();
    if (
      focus &&
      this._matches.length &&
      st?.scene &&
      st.drawn &&
      this._canvas
    ) {
      const k = st.drawn.rep[this._matches[0]];
      if (k >= 0) {
        this._canvas.focus(k, Math.max(this._canvas.scale, 0.6));
      }
    }
  }

  private _nextMatch(step: number): void {
    if (!this._matches.length) {
      return;
    }
    this._matchCursor =
      (this._matchCursor + step + this._matches.length) % this._matches.length;
    const i = this._matches[this._matchCursor];
    this._searchCount.textContent = `${this._matchCursor + 1} / ${this._matches.length}`;
    void this._focusNode(this._current, this._state().model.g.nodes[i].id);
  }

  // ---- interaction -------------------------------------------------------------------

  private async _focusNode(graph: string, id: string): Promise<void> {
    if (graph !== this._current) {
      await this._show(graph);
    }
    const st = this._state();
    const i = st.model.g.index.get(id);
    if (i === undefined) {
      return;
    }
    if (st.model.reveal(i)) {
      await this._relayout(false, i);
    } else if (this._canvas && st.drawn === st.model.vg) {
      this._canvas.focus(st.model.vg.rep[i]);
    }
    this._select(i);
  }

  private _clickItem(item: number): void {
    const st = this._state();
    if (item < 0) {
      this._canvas?.canvas.focus();
      return;
    }
    const it = st.drawn?.items[item];
    if (!it) {
      return;
    }
    if (it.kind === 'cluster') {
      st.model.toggle(it.ref);
      this._showCluster(it.ref);
      void this._relayout(false).then(() => {
        const first = st.model.tree.clusters[it.ref].members[0] ?? -1;
        const k = first >= 0 && st.drawn ? st.drawn.rep[first] : -1;
        if (k >= 0 && this._canvas && !this._canvas.isVisible(k)) {
          this._canvas.focus(k, this._canvas.scale);
        }
      });
      return;
    }
    this._select(it.ref);
  }

  private _toggleFrame(f: number): void {
    const st = this._state();
    const fr = st.scene?.frames[f];
    if (!fr) {
      return;
    }
    st.model.toggle(fr.cluster);
    if (fr.partner >= 0 && st.model.expanded.has(fr.partner)) {
      st.model.toggle(fr.partner);
    }
    void this._relayout(false);
  }

  private _openBodyOf(item: number): void {
    const st = this._state();
    const it = st.drawn?.items[item];
    if (!it || it.kind !== 'node') {
      return;
    }
    const body = st.model.g.nodes[it.ref].called?.find(
      c => c in this._payload.graphs
    );
    if (body) {
      void this._show(body);
    }
  }

  private _select(i: number): void {
    const st = this._state();
    const node = st.model.g.nodes[i];
    this._selected = i;
    this._root?.setAttribute('data-selected', node.id);
    this._applyFlags();
    this._showNode(node);
    // publish the node's lines of its (first) cell
    const byCell = linesByCell(this._cells, [node]);
    const first = byCell.entries().next();
    if (!first.done) {
      const [cell, lines] = first.value;
      HUB.select({ cell, lines, origin: 'hlo', reveal: true });
    }
  }

  private _showCluster(c: number): void {
    showCluster(this._details, this._state().model.tree.clusters[c]);
  }

  private _showNode(node: HloNode): void {
    const st = this._state();
    showNode(this._details, node, {
      payload: this._payload,
      model: st.model,
      cells: this._cells,
      text: this._text,
      fold: c => this._foldCluster(st, c),
      openBody: name => void this._show(name)
    });
  }

  /** Fold open cluster `c` (of graph `st`) back into its box, and show that box. */
  private _foldCluster(st: GraphState, c: number): void {
    if (st.model.expanded.has(c)) {
      st.model.toggle(c);
    }
    void this._relayout(false).then(() => {
      const k = st.drawn ? st.drawn.clusterItem[c] : -1;
      if (k >= 0) {
        this._canvas?.focus(k, this._canvas.scale);
      }
    });
  }
}
