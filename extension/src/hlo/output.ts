/**
 * The interactive HLO / fusion-graph view (`application/vnd.jax-workbench.hlo+json`).
 *
 * Summary strip; toolbar (sub-graph breadcrumb, search, fit, expand all, colour legend);
 * the canvas graph (clusters by op_name scope, laid out in a worker) with a details panel;
 * the top-N heaviest fusions.  Selecting a node publishes its source lines to the link hub;
 * a line selected elsewhere lights the nodes it made.
 */

import type { CellMap } from '../common/cells';
import { el, onThemeChange } from '../common/dom';
import type { FeatureView, RenderContext } from '../common/view';
import { HUB, type LineSelection } from '../linking/hub';
import {
  forgetResolvedColors,
  lineColors,
  resolveColor
} from '../linking/colors';
import { GraphCanvas } from './canvas';
import { clusterPath, type VisibleGraph } from './cluster';
import { DEFAULT_FRACTIONS, formatBytes, formatCount } from './heat';
import { LayoutClient } from './layoutClient';
import { GraphModel } from './model';
import { FLAG_LINKED, FLAG_SEARCH, FLAG_SELECTED, type Scene } from './scene';
import { NodeSearch, topFusions } from './search';
import {
  cellKeyOf,
  formatSource,
  linesByCell,
  nodesForSelection
} from './sources';
import { calledComputation, HloText } from './text';
import type { HloNode, UnpackedHloPayload as HloPayload } from './types';

const TOP_N = 10;

function button(cls: string, text: string, title?: string): HTMLButtonElement {
  const b = el('button', `jwb-hlo-button ${cls}`, text);
  b.type = 'button';
  if (title) {
    b.title = title;
  }
  return b;
}

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
    this._text = new HloText(typeof text === 'string' ? text : '');
    host.textContent = '';
    const root = el('div', 'jwb-hlo');
    root.setAttribute('data-highlighted', '0');
    this._root = root;
    host.appendChild(root);
    root.appendChild(this._summary());
    const collectives = this._collectivesTable();
    if (collectives) {
      root.appendChild(collectives);
    }
    const names = Object.keys(this._payload.graphs ?? {});
    if (this._payload.parse_error || names.length === 0) {
      const note = el(
        'div',
        'jwb-hlo-note',
        this._payload.parse_error
          ? `The HLO text could not be read (${this._payload.parse_error}); showing it as text.`
          : `No graph at the ${this._payload.stage} stage; showing the module text.`
      );
      const pre = el(
        'pre',
        'jwb-hlo-text',
        typeof text === 'string' ? text : ''
      );
      root.append(note, pre);
      ctx.interactive();
      return Promise.resolve();
    }
    root.appendChild(this._toolbar(names));
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
    root.appendChild(this._topTable(names[0]));

    this._canvas = new GraphCanvas(this._graphBox, {
      click: item => this._clickItem(item),
      dblclick: item => this._openBodyOf(item),
      frameClick: f => this._toggleFrame(f)
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
    this._publishColors();
    return this._show(names[0]);
  }

  dispose(): void {
    this._teardown();
    this._layout.dispose();
  }

  private _teardown(): void {
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

  private _summary(): HTMLElement {
    const p = this._payload;
    const box = el('div', 'jwb-hlo-summary');
    const add = (label: string, value: string): void => {
      const item = el('span', 'jwb-hlo-summary-item');
      item.append(
        el('span', 'jwb-hlo-summary-label', `${label} `),
        el('span', 'jwb-hlo-summary-value', value)
      );
      box.appendChild(item);
    };
    box.appendChild(el('span', 'jwb-hlo-title', p.label));
    add('stage', p.stage);
    add(
      'backend',
      `${p.backend}${p.device_kinds?.length ? ` (${p.device_kinds.join(', ')})` : ''} × ${p.device_count}`
    );
    const c = p.counts ?? ({} as HloPayload['counts']);
    const count = (x: number | null | undefined): string =>
      x === null || x === undefined ? 'n/a' : String(x);
    add('instructions', count(c.hlo_instructions));
    add('fusions', count(c.fusions));
    add('unfused ops', count(c.unfused_ops));
    add('flops', formatCount(p.cost?.flops));
    add('transcendentals', formatCount(p.cost?.transcendentals));
    add(
      'bytes accessed',
      p.cost?.bytes_accessed === null ||
        p.cost?.bytes_accessed === undefined ||
        p.cost.bytes_accessed < 0
        ? 'n/a (not reported)'
        : formatBytes(p.cost.bytes_accessed)
    );
    const m = p.memory ?? {};
    if (m.reported === false) {
      add('memory', 'n/a (not reported)');
    } else {
      const mem = (k: keyof HloPayload['memory']): string =>
        formatBytes(typeof m[k] === 'number' ? (m[k] as number) : null);
      add('memory peak', mem('peak_bytes'));
      add('args', mem('argument_bytes'));
      add('outputs', mem('output_bytes'));
      add('temp', mem('temp_bytes'));
    }
    if (p.timings?.compile_s !== null && p.timings?.compile_s !== undefined) {
      add('compile', `${p.timings.compile_s.toFixed(2)} s`);
    }
    return box;
  }

  /** The collectives XLA inserted (the text/html fallback's table): kind, instruction, shape,
   *  bytes, device groups (or source -> target pairs), source line; null when there are none. */
  private _collectivesTable(): HTMLElement | null {
    const list = this._payload.collectives ?? [];
    if (list.length === 0) {
      return null;
    }
    const wrap = el('div', 'jwb-hlo-collectives');
    wrap.appendChild(
      el(
        'div',
        'jwb-hlo-top-title',
        `${list.length} collective${list.length === 1 ? '' : 's'} inserted by XLA`
      )
    );
    const table = el('table', 'jwb-hlo-top jwb-hlo-coll');
    const head = el('tr');
    for (const h of [
      'kind',
      'instruction',
      'shape',
      'bytes',
      'replica groups / pairs',
      'source'
    ]) {
      head.appendChild(el('th', undefined, h));
    }
    const thead = el('thead');
    thead.appendChild(head);
    const tbody = el('tbody');
    for (const c of list) {
      const tr = el('tr');
      tr.dataset.kind = c.kind;
      const groups =
        c.kind === 'collective-permute' && c.source_target_pairs
          ? c.source_target_pairs.map(([a, b]) => `${a}→${b}`).join(' ')
          : c.replica_groups === null || c.replica_groups === undefined
            ? c.groups_text || 'n/a'
            : c.replica_groups.length === 0
              ? 'all devices'
              : c.replica_groups.map(g => `{${g.join(',')}}`).join(' ');
      const src = c.source ? formatSource(this._cells, c.source) : 'no source';
      for (const v of [
        c.kind,
        c.name,
        c.shape,
        formatBytes(c.bytes),
        groups,
        src
      ]) {
        tr.appendChild(el('td', undefined, v));
      }
      tbody.appendChild(tr);
    }
    table.append(thead, tbody);
    wrap.appendChild(table);
    return wrap;
  }

  private _toolbar(names: string[]): HTMLElement {
    const bar = el('div', 'jwb-hlo-toolbar');
    this._crumbs = el('div', 'jwb-hlo-crumbs');
    this._crumbs.setAttribute('aria-label', 'computations');
    bar.appendChild(this._crumbs);
    this._search = el('input', 'jwb-hlo-search');
    this._search.type = 'search';
    this._search.placeholder = 'search op, shape, name, :line, cell line N';
    this._search.setAttribute('aria-label', 'search nodes');
    this._searchCount = el('span', 'jwb-hlo-search-count');
    this._search.addEventListener('input', () => this._runSearch());
    this._search.addEventListener('keydown', ev => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        this._nextMatch(ev.shiftKey ? -1 : 1);
      }
    });
    const fit = button('jwb-hlo-fit', 'Fit', 'show the whole graph');
    fit.addEventListener('click', () => this._canvas?.fit());
    this._expandAll = button(
      'jwb-hlo-expand-all',
      'Expand all',
      'open every cluster and group'
    );
    this._expandAll.addEventListener('click', () => {
      const st = this._state();
      if (st.model.allExpanded) {
        st.model.collapseAll();
      } else {
        st.model.expandAll();
      }
      void this._relayout(true);
    });
    bar.append(
      this._search,
      this._searchCount,
      fit,
      this._expandAll,
      this._legend()
    );
    void names;
    return bar;
  }

  private _legend(): HTMLElement {
    const box = el('span', 'jwb-hlo-legend');
    box.title =
      'Box colour: bytes moved (ESTIMATE from shapes: operands read + result written), by quantile: ' +
      'an instruction among the instructions of its graph, a folded box among the folded boxes shown';
    box.appendChild(
      el('span', 'jwb-hlo-legend-label', 'bytes moved (estimated):')
    );
    // bucket 1 is the rest; bucket top - k holds the values in the top DEFAULT_FRACTIONS[k]
    const steps: Array<[number, string]> = [[1, 'rest']];
    for (let k = DEFAULT_FRACTIONS.length - 1; k >= 0; k--) {
      steps.push([
        DEFAULT_FRACTIONS.length + 1 - k,
        `top ${Math.round(DEFAULT_FRACTIONS[k] * 100)}%`
      ]);
    }
    for (const [b, label] of steps) {
      const sw = el('span', `jwb-hlo-swatch jwb-hlo-heat-${b}`);
      box.append(sw, el('span', 'jwb-hlo-legend-step', label));
    }
    return box;
  }

  private _renderCrumbs(): void {
    const c = this._crumbs;
    c.textContent = '';
    const names = Object.keys(this._payload.graphs);
    this._path.forEach((name, k) => {
      if (k > 0) {
        c.appendChild(el('span', 'jwb-hlo-crumb-sep', '›'));
      }
      const b = button(
        `jwb-hlo-crumb${name === this._current ? ' jwb-hlo-crumb-current' : ''}`,
        name,
        k === 0 ? 'entry computation' : 'body'
      );
      b.dataset.graph = name;
      if (name === this._current) {
        b.setAttribute('aria-current', 'page');
      }
      b.addEventListener('click', () => void this._show(name));
      c.appendChild(b);
    });
    const others = names.filter(n => !this._path.includes(n));
    if (others.length) {
      c.appendChild(el('span', 'jwb-hlo-crumb-label', 'bodies:'));
      for (const name of others) {
        const b = button(
          'jwb-hlo-crumb jwb-hlo-crumb-other',
          name,
          'while/cond/call body'
        );
        b.dataset.graph = name;
        b.addEventListener('click', () => void this._show(name));
        c.appendChild(b);
      }
    }
  }

  private _topTable(entry: string): HTMLElement {
    const wrap = el('div', 'jwb-hlo-top-wrap');
    const graph = this._payload.graphs[entry];
    const idx = topFusions(graph.nodes, TOP_N);
    wrap.appendChild(
      el(
        'div',
        'jwb-hlo-top-title',
        `Heaviest fusions by bytes moved (estimated from shapes) — ${entry}`
      )
    );
    const table = el('table', 'jwb-hlo-top');
    const head = el('tr');
    for (const h of [
      '#',
      'fusion',
      'what',
      'shape',
      'bytes moved (est.)',
      'source'
    ]) {
      head.appendChild(el('th', undefined, h));
    }
    const thead = el('thead');
    thead.appendChild(head);
    const tbody = el('tbody');
    idx.forEach((i, rank) => {
      const n = graph.nodes[i];
      const tr = el('tr');
      tr.dataset.nodeId = n.id;
      tr.tabIndex = 0;
      const src = n.sources?.[0];
      for (const v of [
        String(rank + 1),
        n.id,
        n.label,
        n.shape,
        formatBytes(n.bytes_moved),
        src ? formatSource(this._cells, src) : ''
      ]) {
        tr.appendChild(el('td', undefined, v));
      }
      const go = (): void => void this._focusNode(entry, n.id);
      tr.addEventListener('click', go);
      tr.addEventListener('keydown', ev => {
        if (ev.key === 'Enter') {
          go();
        }
      });
      tbody.appendChild(tr);
    });
    table.append(thead, tbody);
    wrap.appendChild(table);
    return wrap;
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
    const entry = Object.keys(this._payload.graphs)[0];
    if (name === entry) {
      this._path = [entry];
    } else {
      const at = this._path.indexOf(name);
      if (at >= 0) {
        this._path = this._path.slice(0, at + 1);
      } else {
        // a body: path through the computation that calls it when known
        const caller = this._callerOf(name);
        const base =
          caller && this._path.includes(caller)
            ? this._path.slice(0, this._path.indexOf(caller) + 1)
            : [entry];
        this._path = [...base, name];
      }
    }
    this._current = name;
    this._selected = -1;
    this._root?.setAttribute('data-current-graph', name);
    this._root?.removeAttribute('data-selected');
    this._renderCrumbs();
    this._relink();
    this._runSearch(false);
    await this._relayout(true);
  }

  private _callerOf(name: string): string | null {
    for (const [g, graph] of Object.entries(this._payload.graphs)) {
      if (graph.nodes.some(n => n.called?.includes(name))) {
        return g;
      }
    }
    return null;
  }

  private async _relayout(fit: boolean, focusNode = -1): Promise<void> {
    const name = this._current;
    const st = this._state(name);
    const model = st.model;
    this._root?.setAttribute('data-visible-nodes', String(model.visibleCount));
    // everything open from the start (or no cluster at all): nothing to expand or fold
    const nothing = model.allExpanded && model.atInitial;
    this._expandAll.textContent =
      model.allExpanded && !nothing ? 'Collapse' : 'Expand all';
    this._expandAll.disabled = nothing;
    this._expandAll.title = nothing
      ? 'every cluster is open'
      : model.allExpanded
        ? 'fold back to the first view'
        : 'open every cluster and group';
    this._status.textContent = `laying out ${model.visibleCount} boxes…`;
    const vg = model.vg;
    const r = await this._layout.layout(model.layoutInput());
    if (!r || name !== this._current || !this._canvas || model.vg !== vg) {
      return;
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
      ` · layout ${this._layout.lastMs.toFixed(0)} ms`;
    if (focusNode >= 0) {
      this._canvas.focus(vg.rep[focusNode]);
    } else if (fit) {
      // the first folded scope (a layer) is where the program starts: show the top around it
      const around = vg.items.findIndex(
        it =>
          it.kind === 'cluster' && model.tree.clusters[it.ref].kind !== 'group'
      );
      this._canvas.fit(0.8, around);
    }
    // the first drawing of this render (not merely the first layout asked for: that one
    // may have been replaced before it arrived) makes the output usable
    this._drawn();
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

  // ---- flags: selection, linked lines, search ------------------------------------------

  private _applyFlags(): void {
    const st = this._graphs.get(this._current);
    const s = st?.scene;
    const vg = st?.drawn;
    if (!st || !s || !vg) {
      return;
    }
    s.flags.fill(0);
    const rep = vg.rep;
    for (const i of this._linked) {
      if (rep[i] >= 0) {
        s.flags[rep[i]] |= FLAG_LINKED;
      }
    }
    for (const i of this._matches) {
      if (rep[i] >= 0) {
        s.flags[rep[i]] |= FLAG_SEARCH;
      }
    }
    if (this._selected >= 0) {
      const k = vg.items.findIndex(
        it => it.kind === 'node' && it.ref === this._selected
      );
      if (k >= 0) {
        s.flags[k] |= FLAG_SELECTED;
      } else if (rep[this._selected] >= 0) {
        s.flags[rep[this._selected]] |= FLAG_SELECTED;
      }
    }
    this._canvas?.requestDraw();
  }

  private _stripe(
    vg: VisibleGraph,
    model: GraphModel,
    item: number
  ): string | null {
    const it = vg.items[item];
    if (it.kind !== 'node') {
      return null;
    }
    for (const s of model.g.nodes[it.ref].sources ?? []) {
      const key = cellKeyOf(this._cells, s.file);
      if (key === null) {
        continue;
      }
      const c = HUB.colorsOf(key).get(s.line);
      if (c) {
        return this._graphBox ? resolveColor(c, this._graphBox) : null;
      }
    }
    return null;
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
    const drawn = st.drawn;
    st.scene.stripe = drawn.items.map((_, k) =>
      this._stripe(drawn, st.model, k)
    );
    this._canvas?.requestDraw();
  }

  /** Stripes again from the hub's colours (a theme switch re-resolves them for the canvas). */
  private _refreshStripes(): void {
    const st = this._graphs.get(this._current);
    if (!st?.scene || !st.drawn) {
      return;
    }
    const drawn = st.drawn;
    st.scene.stripe = drawn.items.map((_, k) =>
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
    const st = this._state();
    const cl = st.model.tree.clusters[c];
    const d = this._details;
    d.textContent = '';
    d.appendChild(el('div', 'jwb-hlo-details-title', cl.label));
    const dl = el('table', 'jwb-hlo-facts');
    const fact = (k: string, v: string): void => {
      const tr = el('tr');
      tr.append(el('th', undefined, k), el('td', undefined, v));
      dl.appendChild(tr);
    };
    fact(
      'kind',
      cl.kind === 'repeat'
        ? 'repeat (cut at a recurring source line)'
        : cl.kind === 'group'
          ? 'group'
          : 'op_name scope'
    );
    fact('instructions', String(cl.size));
    fact('bytes moved', `${formatBytes(cl.bytesMoved)} (estimated)`);
    d.appendChild(dl);
  }

  private _showNode(node: HloNode): void {
    const st = this._state();
    const d = this._details;
    d.textContent = '';
    d.appendChild(el('div', 'jwb-hlo-details-title', node.id));
    d.appendChild(el('div', 'jwb-hlo-details-label', node.label));
    const dl = el('table', 'jwb-hlo-facts');
    const fact = (k: string, v: string): void => {
      const tr = el('tr');
      tr.append(el('th', undefined, k), el('td', undefined, v));
      dl.appendChild(tr);
    };
    fact(
      'kind',
      `${node.kind} (${node.opcode}${node.fusion_kind ? `, ${node.fusion_kind}` : ''})`
    );
    fact('shape', node.shape);
    fact('result', formatBytes(node.bytes));
    fact(
      'bytes moved',
      `${formatBytes(node.bytes_moved)} (estimated from shapes)`
    );
    if (node.fused_ops?.length) {
      fact('fused ops', node.fused_ops.join(', '));
    }
    if (node.primitives?.length) {
      fact('primitives', node.primitives.join(', '));
    }
    const i = st.model.g.index.get(node.id);
    const opName = i !== undefined ? st.model.g.opNames[i] : '';
    if (opName) {
      fact('op_name', opName);
    }
    d.appendChild(dl);
    const srcs = node.sources ?? [];
    if (srcs.length || node.source_lost) {
      d.appendChild(el('div', 'jwb-hlo-details-head', 'source lines'));
      const ul = el('ul', 'jwb-hlo-sources');
      for (const s of srcs) {
        const li = el('li');
        const key = cellKeyOf(this._cells, s.file);
        const text = `${formatSource(this._cells, s)}${s.function ? ` (${s.function})` : ''}`;
        if (key !== null) {
          const b = button(
            'jwb-hlo-source-link',
            text,
            'show this line in its cell'
          );
          b.addEventListener('click', () =>
            HUB.select({
              cell: key,
              lines: [s.line],
              origin: 'hlo',
              reveal: true
            })
          );
          li.appendChild(b);
        } else {
          li.textContent = text;
          li.title = `${s.file}:${s.line}`;
        }
        ul.appendChild(li);
      }
      if (node.source_lost) {
        ul.appendChild(
          el('li', 'jwb-hlo-dim', 'no source line survived compilation')
        );
      }
      d.appendChild(ul);
    }
    // the open clusters around it, outermost first: a click folds one back into its box
    const inner = i !== undefined ? st.model.tree.nodeCluster[i] : -1;
    if (inner >= 0) {
      const row = el('div', 'jwb-hlo-scopes');
      row.appendChild(el('span', undefined, 'in: '));
      for (const c of clusterPath(st.model.tree, inner)) {
        const cl = st.model.tree.clusters[c];
        const b = button(
          'jwb-hlo-fold',
          `▾ ${cl.label}`,
          'fold this cluster into one box'
        );
        b.addEventListener('click', () => {
          if (st.model.expanded.has(c)) {
            st.model.toggle(c);
          }
          void this._relayout(false).then(() => {
            const k = st.drawn ? st.drawn.clusterItem[c] : -1;
            if (k >= 0) {
              this._canvas?.focus(k, this._canvas.scale);
            }
          });
        });
        row.appendChild(b);
      }
      d.appendChild(row);
    }
    const bodies = (node.called ?? []).filter(c => c in this._payload.graphs);
    if (bodies.length) {
      const row = el('div', 'jwb-hlo-bodies');
      row.appendChild(el('span', undefined, 'bodies: '));
      for (const b of bodies) {
        const bt = button('jwb-hlo-open-body', b, 'open this body as a graph');
        bt.dataset.openGraph = b;
        bt.addEventListener('click', () => void this._show(b));
        row.appendChild(bt);
      }
      d.appendChild(row);
    }
    const ins = st.model.instructions.get(node.id);
    d.appendChild(el('div', 'jwb-hlo-details-head', 'instruction'));
    d.appendChild(
      el(
        'pre',
        'jwb-hlo-code jwb-hlo-instruction',
        ins && ins.line > 0
          ? this._text.line(ins.line).trim()
          : '(not in the module text)'
      )
    );
    if (node.kind === 'fusion' || node.opcode === 'fusion') {
      const name = calledComputation(ins?.called, ins?.attrs);
      const comp = name
        ? this._payload.module?.computations.find(c => c.name === name)
        : undefined;
      if (comp) {
        d.appendChild(
          el('div', 'jwb-hlo-details-head', `fused computation ${comp.name}`)
        );
        d.appendChild(
          el(
            'pre',
            'jwb-hlo-code jwb-hlo-fused',
            this._text.range(comp.lines[0], comp.lines[1])
          )
        );
      }
    }
  }
}
