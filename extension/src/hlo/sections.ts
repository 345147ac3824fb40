/**
 * The parts of the HLO output around the graph, built from the payload and callbacks (no
 * view state): the summary strip, the collectives table, the toolbar with its colour
 * legend, the computations' breadcrumb and the table of the heaviest fusions.  Every
 * payload string goes in as text.
 */

import type { CellMap } from '../common/cells';
import { el } from '../common/dom';
import { DEFAULT_FRACTIONS, formatBytes, formatCount } from './heat';
import { topFusions } from './search';
import { formatSource } from './sources';
import type { UnpackedHloPayload as HloPayload } from './types';

/** how many fusions the top table lists */
export const TOP_N = 10;

/** A toolbar-style button. */
export function button(
  cls: string,
  text: string,
  title?: string
): HTMLButtonElement {
  const b = el('button', `jwb-hlo-button ${cls}`, text);
  b.type = 'button';
  if (title) {
    b.title = title;
  }
  return b;
}

/** The summary strip: stage, backend, counts, cost, memory and compile time. */
export function summaryStrip(p: HloPayload): HTMLElement {
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
export function collectivesTable(
  p: HloPayload,
  cells: CellMap
): HTMLElement | null {
  const list = p.collectives ?? [];
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
    const src = c.source ? formatSource(cells, c.source) : 'no source';
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

/** What the toolbar's controls do. */
export interface ToolbarActions {
  /** the search text changed */
  search(): void;
  /** Enter (step 1) or Shift+Enter (step -1) in the search box */
  nextMatch(step: number): void;
  fit(): void;
  expandAll(): void;
}

/** The toolbar's element and the controls the view updates later. */
export interface Toolbar {
  bar: HTMLElement;
  /** filled by `renderCrumbs` */
  crumbs: HTMLElement;
  search: HTMLInputElement;
  searchCount: HTMLElement;
  expandAll: HTMLButtonElement;
}

/** Breadcrumb, search box and its count, Fit, Open a level, and the colour legend. */
export function toolbar(actions: ToolbarActions): Toolbar {
  const bar = el('div', 'jwb-hlo-toolbar');
  const crumbs = el('div', 'jwb-hlo-crumbs');
  crumbs.setAttribute('aria-label', 'computations');
  bar.appendChild(crumbs);
  const search = el('input', 'jwb-hlo-search');
  search.type = 'search';
  search.placeholder = 'search op, shape, name, :line, cell line N';
  search.setAttribute('aria-label', 'search nodes');
  const searchCount = el('span', 'jwb-hlo-search-count');
  search.addEventListener('input', () => actions.search());
  search.addEventListener('keydown', ev => {
    if (ev.key === 'Enter') {
      ev.preventDefault();
      actions.nextMatch(ev.shiftKey ? -1 : 1);
    }
  });
  const fit = button('jwb-hlo-fit', 'Fit', 'show the whole graph');
  fit.addEventListener('click', () => actions.fit());
  const expandAll = button(
    'jwb-hlo-expand-all',
    'Open a level',
    'open the folded boxes one level'
  );
  expandAll.addEventListener('click', () => actions.expandAll());
  bar.append(search, searchCount, fit, expandAll, legend());
  return { bar, crumbs, search, searchCount, expandAll };
}

/** The colour legend: bytes moved, by quantile bucket. */
export function legend(): HTMLElement {
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

/** What a called computation is to its caller: `loop body`, `cond branch 1`, ... */
function roles(p: HloPayload): Map<string, string> {
  const out = new Map<string, string>();
  for (const graph of Object.values(p.graphs)) {
    for (const node of graph.nodes) {
      (node.called ?? []).forEach((c, k, all) => {
        if (out.has(c)) {
          return;
        }
        const op = node.opcode;
        out.set(
          c,
          op === 'while'
            ? k === 0 && all.length > 1
              ? 'loop condition'
              : 'loop body'
            : op === 'conditional'
              ? `cond branch ${k}`
              : op === 'call'
                ? 'call'
                : `${op} computation`
        );
      });
    }
  }
  return out;
}

/**
 * The name shown for each computation: a body by the user code that made it, when the
 * payload says (`step · loop body, cell [4] line 7`), else XLA's name (`region_0.4`).
 */
export function graphTitles(
  p: HloPayload,
  cells: CellMap
): Map<string, string> {
  const role = roles(p);
  const out = new Map<string, string>();
  for (const [name, graph] of Object.entries(p.graphs)) {
    const origin = graph.origin;
    if (origin?.name) {
      const where = origin.source
        ? `, ${formatSource(cells, origin.source)}`
        : '';
      // a scan's forward and backward loops both run `step`: say which
      const back = graph.nodes.some(n => n.op_name?.includes('transpose('));
      out.set(
        name,
        `${origin.name} · ${back ? 'backward ' : ''}${role.get(name) ?? 'body'}${where}`
      );
    } else {
      out.set(name, name);
    }
  }
  return out;
}

/**
 * The breadcrumb of computations: the path from the entry computation to the one shown
 * (`current` marked), then the other bodies; a click shows that computation.  Each is
 * named by `titles` (XLA's name in its tooltip).
 */
export function renderCrumbs(
  c: HTMLElement,
  names: string[],
  path: string[],
  current: string,
  show: (name: string) => void,
  titles: Map<string, string> = new Map()
): void {
  c.textContent = '';
  const title = (name: string): string => titles.get(name) ?? name;
  path.forEach((name, k) => {
    if (k > 0) {
      c.appendChild(el('span', 'jwb-hlo-crumb-sep', '›'));
    }
    const b = button(
      `jwb-hlo-crumb${name === current ? ' jwb-hlo-crumb-current' : ''}`,
      title(name),
      k === 0 ? 'entry computation' : `body ${name}`
    );
    b.dataset.graph = name;
    if (name === current) {
      b.setAttribute('aria-current', 'page');
    }
    b.addEventListener('click', () => show(name));
    c.appendChild(b);
  });
  const others = names.filter(n => !path.includes(n));
  if (others.length) {
    c.appendChild(el('span', 'jwb-hlo-crumb-label', 'bodies:'));
    for (const name of others) {
      const b = button(
        'jwb-hlo-crumb jwb-hlo-crumb-other',
        title(name),
        `while/cond/call body ${name}`
      );
      b.dataset.graph = name;
      b.addEventListener('click', () => show(name));
      c.appendChild(b);
    }
  }
}

/** The top-N heaviest fusions of computation `entry`; a click (or Enter) focuses one. */
export function topTable(
  p: HloPayload,
  entry: string,
  cells: CellMap,
  focus: (id: string) => void
): HTMLElement {
  const wrap = el('div', 'jwb-hlo-top-wrap');
  const graph = p.graphs[entry];
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
      src ? formatSource(cells, src) : ''
    ]) {
      tr.appendChild(el('td', undefined, v));
    }
    const go = (): void => focus(n.id);
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
