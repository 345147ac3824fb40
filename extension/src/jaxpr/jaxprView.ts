/**
 * The interactive jaxpr: a header that summarises the signature, a search box, and every
 * equation in a virtualised list (nested jaxprs foldable), its rows tinted with their
 * source line's colour and linked to the cell's editor through the hub.
 */

import type { CellMap } from '../common/cells';
import type { FeatureView, RenderContext } from '../common/featureView';
import type { Payload } from '../common/payload';
import {
  fileStem,
  isCut,
  textActions,
  wholeTextAttribute
} from '../common/textActions';
import { lineColor, lineColors } from '../sourcelines/colors';
import { HUB, type LineSelection } from '../sourcelines/hub';
import { pointerMoved } from '../sourcelines/pointer';
import { buildDefUse, varKey, type DefUse } from './defuse';
import { appendSegments, el, plural, seconds } from './dom';
import { headerSummary, signatureText, topPrimitives } from './header';
import {
  ancestors,
  defaultFolds,
  flatten,
  rowSegments,
  rowSources,
  scopeOf,
  visibleRows,
  type FlatJaxpr,
  type RowSources
} from './rows';
import { buildSearchIndex, search, type SearchIndex } from './search';
import {
  cursorLine,
  planReveal,
  scrollerBox,
  scrollingAncestors,
  windowBox
} from './reveal';
import { fileCellAliases } from './source';
import type { JaxprPayload, UnpackedJaxprPayload } from './types';
import { VirtualList } from './virtual';

export const ROW_HEIGHT = 18;
const INDENT_CH = 2;
const MAX_LIST_HEIGHT = 540;
/** room kept between a row the notebook scrolls to and the notebook's edge */
const REVEAL_MARGIN = 8;

/**
 * The editor selection that has already moved the notebook: when several outputs light
 * the same line, the first to ask scrolls and the others only scroll their own lists (each
 * pulling the notebook its own way would leave it wherever the last one did).
 */
let outerScrolledFor: LineSelection | null = null;

/** The header (title, signature, counts, primitive histogram) of one jaxpr payload. */
export function buildHeader(
  p: JaxprPayload,
  onPrimitive?: (prim: string) => void
): HTMLElement {
  const head = el('div', 'jwb-jaxpr-header');
  const title = el('div', 'jwb-jaxpr-title');
  title.appendChild(el('span', 'jwb-jaxpr-label', p.label));
  const summary = headerSummary(p);
  const sig = el('span', 'jwb-jaxpr-sig', signatureText(summary));
  sig.title = `(${p.in_avals.join(', ')}) → (${p.out_avals.join(', ')})`;
  title.appendChild(sig);
  head.appendChild(title);
  const total = p.stats.equations;
  const top = p.stats.top_level_equations;
  const meta = [plural(total, 'equation')];
  if (top !== total) {
    meta[0] += ` (${top.toLocaleString('en-US')} at top level)`;
  }
  meta.push(
    `${plural(summary.inLeaves, 'input')} → ${plural(summary.outLeaves, 'output')}`
  );
  meta.push(`traced in ${seconds(p.timings.trace)}`);
  head.appendChild(el('div', 'jwb-jaxpr-meta', meta.join(' · ')));
  const hist = el('div', 'jwb-jaxpr-hist');
  for (const [prim, n] of topPrimitives(p.stats.histogram)) {
    const chip = el(
      'button',
      'jwb-jaxpr-chip',
      `${prim} ${n.toLocaleString('en-US')}`
    );
    chip.type = 'button';
    chip.title = onPrimitive ? `search for ${prim}` : `${prim}: ${n}`;
    if (onPrimitive) {
      chip.addEventListener('click', () => onPrimitive(prim));
    }
    hist.appendChild(chip);
  }
  head.appendChild(hist);
  return head;
}

/** Where the whole of a cut text is, as a clause (`where` from the kernel's left-out line). */
function wholeTextWhere(where: string | null): string {
  return where === null
    ? 'the rest is not saved in the notebook.'
    : `the whole text is ${where} of this cell's result in the kernel.`;
}

class JaxprView implements FeatureView {
  private _root: HTMLElement | null = null;
  private _list: VirtualList | null = null;
  private _flat: FlatJaxpr | null = null;
  private _sources: RowSources | null = null;
  private _cells: CellMap = {};
  private _folded = new Set<number>();
  private _visible = new Int32Array(0);
  private _rowToVis = new Int32Array(0);
  private _index: SearchIndex | null = null;
  private _defUse: Map<string, DefUse> | null = null;
  private _hits: number[] = [];
  private _hitSet = new Uint8Array(0);
  private _current = -1;
  private _count: HTMLElement | null = null;
  private _input: HTMLInputElement | null = null;
  /** the clicked variable: its name and scope (the open row of its jaxpr) */
  private _var: { name: string; scope: number } | null = null;
  private _varRows = new Set<number>();
  private _lit = new Uint8Array(0);
  private _outputId = '';
  private _unsubscribe: (() => void) | null = null;
  private _hovered = -1;
  /** the last selection this view published (withdrawn when the output goes) */
  private _published: LineSelection | null = null;
  private _idle = 0;
  /** alias (cell id or #number) -> files of this payload that are that cell */
  private _aliasFiles = new Map<string, Set<string>>();
  /** whether the list is in the window (JupyterLab skips laying out cells out of it) */
  private _inView = false;
  /** a row an editor selected while the list was out of view: scrolled to once in view */
  private _pendingRow = -1;
  private _observer: IntersectionObserver | null = null;

  render(host: HTMLElement, payload: Payload, ctx: RenderContext): void {
    this._teardown();
    const p = payload as unknown as UnpackedJaxprPayload;
    host.textContent = '';
    const root = el('div', 'jwb-jaxpr');
    root.setAttribute('data-highlighted', '0');
    this._root = root;
    this._outputId = ctx.outputId;
    this._cells = ctx.cells;
    root.appendChild(buildHeader(p, prim => this._setQuery(prim)));
    root.appendChild(
      textActions(
        ctx.bundle['text/plain'],
        p.text_size,
        'jaxpr',
        `${fileStem(p.label)}.jaxpr.txt`
      )
    );
    if (!p.jaxpr) {
      root.appendChild(
        el(
          'div',
          'jwb-jaxpr-note',
          `This program has ${plural(p.stats.equations, 'equation')}: too many for the structured view. ` +
            (isCut(p.text_size) && p.text_size
              ? `The text below is the first ${p.text_size.shown_lines.toLocaleString('en-US')} of ` +
                `${p.text_size.lines.toLocaleString('en-US')} lines of JAX's text (what the ` +
                'notebook saves); ' +
                wholeTextWhere(wholeTextAttribute(ctx.bundle['text/plain']))
              : 'The text view below has them all.')
        )
      );
      const text = ctx.bundle['text/plain'];
      if (typeof text === 'string') {
        root.appendChild(el('pre', 'jwb-jaxpr-text', text));
      }
      host.appendChild(root);
      ctx.interactive();
      return;
    }
    const flat = flatten(p.jaxpr, p.avals);
    this._flat = flat;
    this._sources = rowSources(flat, this._cells, p.lines ?? {});
    this._lit = new Uint8Array(flat.equations);
    this._hitSet = new Uint8Array(flat.equations);
    this._folded = defaultFolds(flat);
    for (const file of Object.keys(this._cells)) {
      this._addAliases(file);
    }
    for (const r of flat.rows) {
      if (r.equation?.source) {
        this._addAliases(r.equation.source.file);
      }
    }

    root.appendChild(this._toolbar());
    const list = new VirtualList({
      rowHeight: ROW_HEIGHT,
      overscan: 12,
      maxHeight: MAX_LIST_HEIGHT,
      render: i => this._renderRow(i)
    });
    list.scroller.classList.add('jwb-jaxpr-list');
    this._list = list;
    root.appendChild(list.scroller);
    host.appendChild(root);
    this._bindList(list.scroller);
    this._relayout();
    this._watchView(list.scroller);

    for (const [cell, lines] of this._sources.linesByCell) {
      HUB.color({ cell, colors: lineColors(lines) }, this._outputId);
    }
    this._unsubscribe = HUB.onSelect(sel => this._onSelection(sel));
    if (HUB.selection) {
      this._onSelection(HUB.selection);
    }
    ctx.interactive();
    // the search index is built while the user reads, not on their first keystroke
    const flatNow = flat;
    this._idle = window.setTimeout(() => {
      this._idle = 0;
      if (this._flat === flatNow) {
        this._ensureIndex();
      }
    }, 200);
  }

  /**
   * Follow whether the list is in the window.  An editor's line selected while it is not
   * (the output is cells below, or JupyterLab's windowing has not laid it out: a scroll then
   * is lost) is scrolled to when the list comes into view, so the lit rows are what the
   * user sees on reaching the output.  Only the list scrolls then, never the page or the
   * focus (the user is the one scrolling).
   */
  private _watchView(scroller: HTMLElement): void {
    if (typeof IntersectionObserver === 'undefined') {
      return;
    }
    this._observer = new IntersectionObserver(entries => {
      this._inView = entries[entries.length - 1].isIntersecting;
      if (this._inView && this._pendingRow >= 0 && this._flat) {
        const row = this._pendingRow;
        this._pendingRow = -1;
        this._showRow(row, null);
      }
    });
    this._observer.observe(scroller);
  }

  private _ensureIndex(): SearchIndex {
    if (!this._index) {
      this._index = buildSearchIndex(
        this._flat!,
        this._sources!.label,
        this._sources!.text
      );
    }
    return this._index;
  }

  private _addAliases(file: string): void {
    for (const alias of fileCellAliases(this._cells, file)) {
      let set = this._aliasFiles.get(alias);
      if (!set) {
        this._aliasFiles.set(alias, (set = new Set()));
      }
      set.add(file);
    }
  }

  // -- layout -----------------------------------------------------------------------------

  private _relayout(): void {
    const flat = this._flat!;
    this._visible = visibleRows(flat, this._folded);
    this._rowToVis = new Int32Array(flat.rows.length).fill(-1);
    this._visible.forEach((r, v) => {
      this._rowToVis[r] = v;
    });
    this._list!.setCount(this._visible.length);
  }

  private _toggleFold(row: number): void {
    if (this._folded.has(row)) {
      this._folded.delete(row);
    } else {
      this._folded.add(row);
    }
    this._relayout();
  }

  private _setAllFolds(fold: boolean): void {
    const flat = this._flat!;
    this._folded = fold ? defaultFolds(flat, 0) : new Set();
    this._relayout();
  }

  /** Unfold what hides `row`; its index among the drawn rows (-1: none). */
  private _unfoldTo(row: number): number {
    const flat = this._flat!;
    let changed = false;
    for (const a of ancestors(flat, row)) {
      if (this._folded.delete(a)) {
        changed = true;
      }
    }
    if (changed) {
      this._relayout();
    }
    return this._rowToVis[row];
  }

  /** Unfold what hides `row`, scroll the list to it (search, variables: the list in view). */
  private _reveal(row: number): void {
    const v = this._unfoldTo(row);
    if (v >= 0) {
      this._list!.scrollTo(v);
    }
  }

  /**
   * Show `row`, selected from elsewhere (an editor's line, another output), where the user
   * sees it: see reveal.ts.  The enclosing scrollers (the notebook's) move only for an
   * editor's selection `sel`, once per selection, and never take the editor's focus.
   * Whether the row could be shown; if not, it is shown when the list comes into view.
   */
  private _showRow(row: number, sel: LineSelection | null): boolean {
    const v = this._unfoldTo(row);
    const list = this._list!;
    const scroller = list.scroller;
    if (v < 0) {
      return true;
    }
    if (!scroller.isConnected || scroller.clientHeight === 0) {
      list.scrollTo(v); // not laid out (JupyterLab skips cells out of the window)
      return false;
    }
    const line = sel ? cursorLine() : null;
    const scrollers = scrollingAncestors(scroller);
    const outer = scrollers.map(s => scrollerBox(s, line));
    if (!scrollers.includes(document.scrollingElement as HTMLElement)) {
      outer.push(windowBox()); // the window clips what the notebook's scroller shows
    }
    const r = line?.getBoundingClientRect();
    const plan = planReveal({
      rowHeight: ROW_HEIGHT,
      index: v,
      list: scrollerBox(scroller, null),
      outer,
      cursor: r ? { top: r.top, bottom: r.bottom } : null,
      mayScrollOuter:
        !!sel && sel.origin === 'editor' && outerScrolledFor !== sel,
      margin: REVEAL_MARGIN
    });
    if (plan.listScrollTop !== null) {
      list.scrollToOffset(plan.listScrollTop);
    }
    plan.outerDeltas.forEach((d, k) => {
      if (d !== 0 && k < scrollers.length) {
        scrollers[k].scrollTop += d;
        outerScrolledFor = sel;
      }
    });
    return plan.seen;
  }

  private _renderRow(v: number): HTMLElement {
    const flat = this._flat!;
    const r = this._visible[v];
    const row = flat.rows[r];
    const node = el('div', `jwb-jaxpr-row jwb-jaxpr-${row.kind}`);
    node.dataset.row = String(r);
    const folded = row.kind === 'open' && this._folded.has(r);
    const gutter = el('span', 'jwb-jaxpr-gutter');
    if (row.kind === 'open' && row.depth > 0) {
      gutter.textContent = folded ? '▸' : '▾';
      gutter.classList.add('jwb-jaxpr-fold');
      node.classList.add('jwb-jaxpr-foldable');
      node.title = folded
        ? `unfold (${plural(row.count, 'equation')})`
        : 'fold';
    }
    node.appendChild(gutter);
    const depth =
      row.kind === 'eqn'
        ? row.depth + 1
        : row.kind === 'close'
          ? row.depth + 1
          : row.depth;
    const code = el('span', 'jwb-jaxpr-code');
    code.style.paddingLeft = `${depth * INDENT_CH}ch`;
    const hl =
      this._var && this._var.scope === scopeOf(flat, r) ? this._var.name : null;
    const segs = rowSegments(flat, row, folded);
    appendSegments(code, segs, hl);
    // a long equation is cut (ellipsis) before its source label: the whole text on hover
    code.title = segs.map(s => s.text).join('');
    node.appendChild(code);
    if (this._varRows.has(r)) {
      node.classList.add('jwb-jaxpr-varrow');
    }
    if (row.kind === 'eqn') {
      const e = row.eqn;
      node.dataset.eqn = String(e);
      const src = row.equation!.source;
      if (src) {
        const link = el('span', 'jwb-jaxpr-src', this._sources!.label[e]);
        const lineText = this._sources!.text[e];
        link.title =
          `${src.file}:${src.line}:${src.column} (${src.function})` +
          (row.equation!.name_stack ? ` · ${row.equation!.name_stack}` : '') +
          (lineText ? `\n${lineText}` : '');
        if (this._sources!.cellOf[e]) {
          link.classList.add('jwb-jaxpr-src-cell');
          // solid: the stylesheet mixes it into the theme's background (lighter in Dark)
          node.style.setProperty('--jwb-line-solid', lineColor(src.line, 1));
          node.classList.add('jwb-jaxpr-tinted');
        }
        node.appendChild(link);
      }
      if (this._lit[e]) {
        node.classList.add('jwb-linked');
      }
      if (this._hitSet[e]) {
        node.classList.add('jwb-jaxpr-match');
      }
      if (this._current >= 0 && this._hits[this._current] === e) {
        node.classList.add('jwb-jaxpr-current');
      }
    }
    return node;
  }

  // -- events -----------------------------------------------------------------------------

  private _bindList(scroller: HTMLElement): void {
    scroller.addEventListener('click', ev => {
      const target = ev.target as HTMLElement;
      const rowNode = target.closest<HTMLElement>('.jwb-jaxpr-row');
      if (!rowNode) {
        return;
      }
      const r = Number(rowNode.dataset.row);
      const v = target.closest<HTMLElement>('[data-v]');
      if (v?.dataset.v) {
        const scope = scopeOf(this._flat!, r);
        const same =
          this._var &&
          this._var.name === v.dataset.v &&
          this._var.scope === scope;
        this._highlightVar(same ? null : { name: v.dataset.v, scope });
        return;
      }
      if (target.closest('.jwb-jaxpr-src')) {
        this._publishRow(r, true);
        return;
      }
      const row = this._flat!.rows[r];
      if (row.kind === 'open' && row.depth > 0) {
        this._toggleFold(r);
      }
    });
    scroller.addEventListener('mouseover', ev => {
      if (!pointerMoved(ev)) {
        return;
      } // the list or the page scrolled under a still pointer
      const rowNode = (ev.target as HTMLElement).closest<HTMLElement>(
        '.jwb-jaxpr-row'
      );
      const r = rowNode ? Number(rowNode.dataset.row) : -1;
      if (r === this._hovered) {
        return;
      }
      this._hovered = r;
      if (r >= 0) {
        this._publishRow(r, false);
      }
    });
    scroller.addEventListener('mouseleave', () => {
      this._hovered = -1;
      const sel = HUB.selection;
      if (sel && sel.origin === 'jaxpr' && !sel.reveal) {
        HUB.select(null);
      }
    });
  }

  /** Tell the hub about row `r`'s source line (hover: reveal false; click: true). */
  private _publishRow(r: number, reveal: boolean): void {
    const row = this._flat!.rows[r];
    if (row.kind !== 'eqn') {
      return;
    }
    const src = row.equation!.source;
    const cell = this._sources!.cellOf[row.eqn];
    if (!src || !cell) {
      return;
    }
    const cur = HUB.selection;
    if (
      !reveal &&
      cur &&
      cur.reveal &&
      cur.origin === 'jaxpr' &&
      cur.cell === cell &&
      cur.lines.length === 1 &&
      cur.lines[0] === src.line
    ) {
      return;
    } // keep the click's selection
    this._published = { cell, lines: [src.line], origin: 'jaxpr', reveal };
    HUB.select(this._published);
  }

  private _onSelection(sel: LineSelection | null): void {
    const flat = this._flat;
    if (!flat || !this._root) {
      return;
    }
    this._lit.fill(0);
    let n = 0;
    let first = -1;
    const files = sel ? this._aliasFiles.get(sel.cell) : undefined;
    if (sel && files) {
      const lines = new Set(sel.lines);
      for (let e = 0; e < flat.equations; e++) {
        const src = flat.rows[flat.eqnRow[e]].equation!.source;
        if (src && lines.has(src.line) && files.has(src.file)) {
          this._lit[e] = 1;
          n++;
          if (first < 0) {
            first = e;
          }
        }
      }
    }
    this._root.setAttribute('data-highlighted', String(n));
    for (const [, node] of this._list!.drawn()) {
      const e = node.dataset.eqn;
      node.classList.toggle(
        'jwb-linked',
        e !== undefined && this._lit[Number(e)] === 1
      );
    }
    if (sel && sel.reveal && sel.origin !== 'jaxpr') {
      this._pendingRow = -1;
      if (first >= 0 && !this._showRow(flat.eqnRow[first], sel)) {
        this._pendingRow = flat.eqnRow[first];
      }
    }
  }

  private _highlightVar(v: { name: string; scope: number } | null): void {
    this._var = v;
    this._varRows.clear();
    let def = -1;
    if (v) {
      if (!this._defUse) {
        this._defUse = buildDefUse(this._flat!);
      }
      const du = this._defUse.get(varKey(v.scope, v.name));
      if (du) {
        for (const r of du.defs) {
          this._varRows.add(r);
        }
        for (const r of du.uses) {
          this._varRows.add(r);
        }
        def = du.defs.length ? du.defs[0] : -1;
      }
    }
    this._root!.dataset.var = v?.name ?? '';
    this._list!.refresh();
    if (def >= 0) {
      this._reveal(def);
    }
  }

  // -- search -----------------------------------------------------------------------------

  private _toolbar(): HTMLElement {
    const bar = el('div', 'jwb-jaxpr-toolbar');
    const input = el('input', 'jwb-jaxpr-search');
    input.type = 'search';
    input.placeholder = 'Search primitive, variable, shape, source text, line…';
    input.setAttribute('aria-label', 'search equations');
    input.spellcheck = false;
    this._input = input;
    const count = el('span', 'jwb-jaxpr-search-count');
    this._count = count;
    const prev = el('button', 'jwb-jaxpr-prev', '↑');
    prev.type = 'button';
    prev.title = 'previous result (Shift+Enter)';
    const next = el('button', 'jwb-jaxpr-next', '↓');
    next.type = 'button';
    next.title = 'next result (Enter)';
    const foldAll = el('button', 'jwb-jaxpr-fold-all', 'fold all');
    foldAll.type = 'button';
    const unfoldAll = el('button', 'jwb-jaxpr-unfold-all', 'unfold all');
    unfoldAll.type = 'button';
    input.addEventListener('input', () => this._runSearch());
    input.addEventListener('keydown', ev => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        this._step(ev.shiftKey ? -1 : 1);
      } else if (ev.key === 'Escape' && input.value !== '') {
        // used: a second Escape leaves the output (common/keys.ts)
        ev.preventDefault();
        input.value = '';
        this._runSearch();
      }
    });
    prev.addEventListener('click', () => this._step(-1));
    next.addEventListener('click', () => this._step(1));
    foldAll.addEventListener('click', () => this._setAllFolds(true));
    unfoldAll.addEventListener('click', () => this._setAllFolds(false));
    bar.append(input, count, prev, next, foldAll, unfoldAll);
    return bar;
  }

  private _setQuery(q: string): void {
    if (!this._input) {
      return;
    }
    this._input.value = q;
    this._runSearch();
  }

  private _runSearch(): void {
    const t0 = performance.now();
    const flat = this._flat!;
    const q = this._input!.value;
    this._hits = q.trim() ? search(this._ensureIndex(), q) : [];
    this._hitSet.fill(0);
    for (const e of this._hits) {
      this._hitSet[e] = 1;
    }
    this._current = this._hits.length ? 0 : -1;
    this._showCount(q);
    if (this._current >= 0) {
      this._reveal(flat.eqnRow[this._hits[0]]);
    }
    this._list!.refresh();
    performance.measure('jwb:jaxpr:search', {
      start: t0,
      end: performance.now(),
      detail: { query: q, results: this._hits.length }
    });
  }

  private _showCount(q: string): void {
    const n = this._hits.length;
    this._count!.textContent = !q.trim()
      ? ''
      : n
        ? `${this._current + 1} of ${n.toLocaleString('en-US')}`
        : 'no results';
  }

  private _step(d: number): void {
    const n = this._hits.length;
    if (!n) {
      return;
    }
    this._current = (this._current + d + n) % n;
    this._showCount(this._input!.value);
    this._reveal(this._flat!.eqnRow[this._hits[this._current]]);
    this._list!.refresh();
  }

  // -- lifetime ---------------------------------------------------------------------------

  private _teardown(): void {
    if (this._idle) {
      window.clearTimeout(this._idle);
    }
    this._idle = 0;
    this._unsubscribe?.();
    this._unsubscribe = null;
    this._observer?.disconnect();
    this._observer = null;
    this._inView = false;
    this._pendingRow = -1;
    // the editor would keep the line selected (and other outputs lit) for an output now gone
    if (this._published && HUB.selection === this._published) {
      HUB.select(null);
    }
    this._published = null;
    if (this._outputId) {
      HUB.release(this._outputId);
    }
    this._list?.dispose();
    this._list = null;
    this._flat = null;
    this._index = null;
    this._defUse = null;
    this._hits = [];
    this._current = -1;
    this._var = null;
    this._varRows.clear();
    this._aliasFiles.clear();
    this._hovered = -1;
  }

  dispose(): void {
    this._teardown();
    this._root = null;
  }
}

export function createJaxprView(): FeatureView {
  return new JaxprView();
}
