/**
 * The cache outputs: `cache-cell` (the compile line beside a cell: one line per function,
 * a recompile's reasons folded under it), `cache` (%jaxcache: the ledger, sortable,
 * filterable, a detail row per function with every recorded miss; the newest compile
 * records) and `cache-persistent` (%jaxcache persist).
 */

import { add, el } from '../common/dom';
import { drawnView, type FeatureViewFactory } from '../common/featureView';
import {
  againParts,
  distinctSites,
  groupHead,
  LEDGER_COLUMNS,
  ledgerCell,
  ledgerView,
  persistentLine,
  persistentRows,
  recordLine,
  recordMatches,
  siteLabel,
  type CacheCellPayload,
  type CachePayload,
  type CompileRecord,
  type FunctionGroup,
  type MissReason,
  type PersistentStatus
} from './model';

function reasonItem(parent: HTMLElement, r: MissReason): void {
  const li = add(parent, el('li', 'jwb-cache-reason'));
  add(
    li,
    el(
      'span',
      `jwb-cache-kind jwb-cache-kind-${r.kind.replace(/[^a-z_]/g, '')}`,
      r.kind.replace(/_/g, ' ')
    )
  );
  add(li, el('span', undefined, ` ${r.text}`));
}

function groupNode(g: FunctionGroup): HTMLElement {
  const box = el('div', `jwb-cache-group jwb-cache-origin-${g.origin}`);
  const line = add(box, el('div', 'jwb-cache-line'));
  const hasMore =
    g.origin !== 'jax' && (g.reasons.length > 0 || g.call_sites.length > 0);
  const toggle = add(
    line,
    el('button', 'jwb-cache-toggle', hasMore ? '▸' : '')
  );
  toggle.disabled = !hasMore;
  toggle.setAttribute('aria-label', 'details');
  add(line, el('span', 'jwb-cache-head', groupHead(g)));
  if (g.reasons.length && g.origin !== 'jax') {
    const shown = 2;
    const more = g.reasons.length - shown;
    const parts = againParts(g, shown);
    parts.forEach(([word, texts], k) => {
      const last = k === parts.length - 1 && more > 0 ? `; +${more} more` : '';
      add(line, el('span', undefined, ' · '));
      add(line, el('span', 'jwb-cache-again', `${word}:`));
      add(line, el('span', 'jwb-cache-miss', ` ${texts.join('; ')}${last}`));
    });
  }
  if (hasMore) {
    const det = add(box, el('div', 'jwb-cache-more'));
    det.hidden = true;
    if (g.reasons.length) {
      const ul = add(det, el('ul'));
      for (const r of g.reasons) {
        reasonItem(ul, r);
      }
    }
    for (const c of distinctSites(g.call_sites, 3)) {
      const d = add(
        det,
        el('div', 'jwb-cache-site', `called at ${siteLabel(c)}: `)
      );
      add(d, el('code', undefined, c.text));
    }
    const flip = (): void => {
      det.hidden = !det.hidden;
      toggle.textContent = det.hidden ? '▸' : '▾';
      box.classList.toggle('jwb-open', !det.hidden);
    };
    toggle.addEventListener('click', flip);
    line.addEventListener('click', ev => {
      if (ev.target !== toggle) {
        flip();
      }
    });
  }
  return box;
}

export const cacheCellView = drawnView<CacheCellPayload>(
  'jwb-cache-cell',
  (root, p) => {
    for (const g of p.functions) {
      root.appendChild(groupNode(g));
    }
    if (p.jax_helpers) {
      root.appendChild(groupNode(p.jax_helpers));
    }
  }
);

function recordNode(r: CompileRecord): HTMLElement {
  const li = el('li', 'jwb-cache-record');
  add(li, el('span', undefined, recordLine(r)));
  if (r.call_site) {
    add(li, el('span', 'jwb-cache-site', ` · at ${siteLabel(r.call_site)}: `));
    add(li, el('code', undefined, r.call_site.text));
  }
  if (r.persistent_note) {
    add(li, el('div', 'jwb-cache-note', r.persistent_note));
  }
  if (r.jax_explanation) {
    const d = add(li, el('details', 'jwb-cache-explain'));
    add(d, el('summary', undefined, "JAX's explanation"));
    add(d, el('pre', undefined, r.jax_explanation));
  }
  return li;
}

export const cacheView: FeatureViewFactory = () => {
  const state = {
    sort: null as string | null,
    desc: false,
    query: '',
    open: new Set<string>()
  };
  return {
    render(host, raw, ctx) {
      const p = raw as unknown as CachePayload;
      host.textContent = '';
      const root = add(host, el('div', 'jwb-cache'));
      const bar = add(root, el('div', 'jwb-cache-bar'));
      add(
        bar,
        el(
          'span',
          'jwb-cache-count',
          `${p.functions.length}${p.functions_total > p.functions.length ? ` of ${p.functions_total}` : ''} functions · ` +
            `${p.records.length}${p.records_total > p.records.length ? ` of ${p.records_total}` : ''} compile records`
        )
      );
      const filter = add(bar, el('input', 'jwb-cache-filter jp-mod-styled'));
      filter.type = 'search';
      filter.placeholder = 'filter: function, cell, reason';
      filter.value = state.query;
      const shownCount = add(bar, el('span', 'jwb-cache-shown'));
      const table = add(
        add(root, el('div', 'jwb-cache-scroll')),
        el('table', 'jwb-table jwb-cache-table')
      );
      const hr = add(add(table, el('thead')), el('tr'));
      const body = add(table, el('tbody'));
      const recBox = add(root, el('details', 'jwb-cache-records'));
      const recSum = add(recBox, el('summary'));
      const recList = add(recBox, el('ol'));
      add(
        root,
        el('div', 'jwb-cache-persist', persistentLine(p.persistent_cache))
      );

      const ths: HTMLElement[] = [];
      const fill = (): void => {
        const idx = ledgerView(
          p.functions,
          state.query,
          state.sort,
          state.desc
        );
        body.textContent = '';
        for (const i of idx) {
          const f = p.functions[i];
          const tr = add(
            body,
            el('tr', `jwb-cache-row jwb-cache-origin-${f.origin}`)
          );
          tr.dataset.key = f.key;
          tr.tabIndex = 0;
          const open = state.open.has(f.key);
          tr.classList.toggle('jwb-open', open);
          tr.setAttribute('aria-expanded', String(open));
          for (const c of LEDGER_COLUMNS) {
            const td = add(
              tr,
              el('td', c.numeric ? 'jwb-num' : undefined, ledgerCell(f, c.id))
            );
            if (c.id === 'defined' && f.defined_at) {
              td.title = f.defined_at;
            }
            if (c.id === 'function') {
              td.classList.add('jwb-cache-fn');
            }
            if (c.id === 'why') {
              td.classList.add('jwb-cache-why');
            }
          }
          const flip = (): void => {
            if (state.open.has(f.key)) {
              state.open.delete(f.key);
            } else {
              state.open.add(f.key);
            }
            fill();
          };
          tr.addEventListener('click', flip);
          tr.addEventListener('keydown', ev => {
            if (ev.key === 'Enter' || ev.key === ' ') {
              ev.preventDefault();
              flip();
            }
          });
          if (open) {
            const dr = add(body, el('tr', 'jwb-cache-detail'));
            const td = add(dr, el('td'));
            td.colSpan = LEDGER_COLUMNS.length;
            add(
              td,
              el(
                'div',
                'jwb-cache-key',
                `key ${f.key} · ${f.traces} traces · ${f.lowers} lowerings`
              )
            );
            if (f.misses.length) {
              add(
                td,
                el(
                  'div',
                  'jwb-cache-caption',
                  `compiles with reasons (the latest ${f.misses.length}):`
                )
              );
              const ol = add(td, el('ol'));
              for (const m of f.misses) {
                ol.appendChild(recordNode(m));
              }
            } else {
              add(td, el('div', 'jwb-cache-caption', 'no recompiles recorded'));
            }
          }
        }
        shownCount.textContent = state.query
          ? `${idx.length} match${idx.length === 1 ? '' : 'es'}`
          : '';
        root.dataset.shown = String(idx.length);
        ths.forEach(th => {
          th.classList.toggle(
            'jwb-sort-asc',
            state.sort === th.dataset.col && !state.desc
          );
          th.classList.toggle(
            'jwb-sort-desc',
            state.sort === th.dataset.col && state.desc
          );
        });
        const recs = p.records
          .filter(r => recordMatches(r, state.query))
          .reverse();
        recSum.textContent = `newest compile records (${recs.length}${state.query ? ' matching' : ''})`;
        recList.textContent = '';
        for (const r of recs.slice(0, 200)) {
          recList.appendChild(recordNode(r));
        }
      };
      for (const c of LEDGER_COLUMNS) {
        const th = add(
          hr,
          el('th', `jwb-sortable${c.numeric ? ' jwb-num' : ''}`, c.label)
        );
        th.dataset.col = c.id;
        th.tabIndex = 0;
        ths.push(th);
        const click = (): void => {
          if (state.sort === c.id) {
            state.desc = !state.desc;
          } else {
            state.sort = c.id;
            state.desc = c.numeric;
          }
          fill();
        };
        th.addEventListener('click', click);
        th.addEventListener('keydown', ev => {
          if (ev.key === 'Enter') {
            click();
          }
        });
      }
      filter.addEventListener('input', () => {
        state.query = filter.value;
        fill();
      });
      fill();
      ctx.interactive();
    }
  };
};

export const cachePersistentView = drawnView<PersistentStatus>(
  'jwb-cache-persistent',
  (root, p) => {
    add(root, el('div', 'jwb-cache-title', 'persistent compilation cache'));
    const t = add(root, el('table', 'jwb-cache-kv'));
    for (const [k, v] of persistentRows(p)) {
      const tr = add(t, el('tr'));
      add(tr, el('th', undefined, k));
      add(tr, el('td', undefined, v));
    }
  }
);
