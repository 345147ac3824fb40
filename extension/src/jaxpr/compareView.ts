/**
 * `%jaxpr --compare`: one column per stage (the function, then each transform), equations
 * aligned across columns on primitive + result avals; an equation new in a stage is marked
 * added, one its next stage drops is marked removed.  Virtualised like the jaxpr view.
 */

import type { FeatureView, RenderContext } from '../common/featureView';
import { unpack, type Payload } from '../common/payload';
import { align, markOf, signatures, type Alignment } from './compare';
import { appendSegments, el, plural } from './dom';
import { buildHeader, ROW_HEIGHT } from './jaxprView';
import { flatten, rowSegments, rowText, type FlatJaxpr } from './rows';
import type { JaxprComparePayload, JaxprPayload } from './types';
import { VirtualList } from './virtual';

const MAX_LIST_HEIGHT = 540;

class CompareView implements FeatureView {
  private _list: VirtualList | null = null;
  private _flats: (FlatJaxpr | null)[] = [];
  private _al: Alignment | null = null;
  private _rows: Int32Array[] = [];
  private _onlyDiff = false;

  async render(
    host: HTMLElement,
    payload: Payload,
    ctx: RenderContext
  ): Promise<void> {
    this.dispose();
    const raw = payload as unknown as JaxprComparePayload;
    // each stage is packed on its own when big (the renderer unpacks only the envelope)
    const stagesUnpacked = await Promise.all(
      raw.stages.map(
        s => unpack(s as unknown as Payload) as unknown as Promise<JaxprPayload>
      )
    );
    const p: JaxprComparePayload = { ...raw, stages: stagesUnpacked };
    host.textContent = '';
    const root = el('div', 'jwb-jaxpr jwb-jaxpr-compare');
    root.setAttribute('data-highlighted', '0');
    const stages = p.stages;
    this._flats = stages.map(s => (s.jaxpr ? flatten(s.jaxpr, s.avals) : null));
    const sigs = this._flats.map(f => (f ? signatures(f) : []));
    const al = align(sigs);
    this._al = al;
    const cols = `repeat(${stages.length}, minmax(0, 1fr))`;

    const heads = el('div', 'jwb-jaxpr-compare-heads');
    heads.style.gridTemplateColumns = cols;
    let prev: number | null = null;
    stages.forEach((s, k) => {
      const col = el('div', 'jwb-jaxpr-compare-head');
      col.appendChild(buildHeader(s));
      const total = s.stats.equations;
      let added = 0,
        removed = 0;
      for (let e = 0; e < sigs[k].length; e++) {
        if (k > 0 && !al.matchedPrev[k][e]) {
          added++;
        }
        if (k < stages.length - 1 && !al.matchedNext[k][e]) {
          removed++;
        }
      }
      const parts = [
        plural(total, 'equation') +
          (prev === null
            ? ''
            : ` (${total - prev >= 0 ? '+' : ''}${total - prev})`)
      ];
      if (k > 0) {
        parts.push(`${added} added`);
      }
      if (k < stages.length - 1) {
        parts.push(`${removed} removed in the next`);
      }
      col.appendChild(el('div', 'jwb-jaxpr-delta', parts.join(' · ')));
      if (!s.jaxpr) {
        col.appendChild(
          el(
            'div',
            'jwb-jaxpr-note',
            'too many equations for the structured view'
          )
        );
      }
      prev = total;
      heads.appendChild(col);
    });
    root.appendChild(heads);

    const bar = el('div', 'jwb-jaxpr-toolbar');
    const label = el('label', 'jwb-jaxpr-onlydiff');
    const box = el('input');
    box.type = 'checkbox';
    box.addEventListener('change', () => {
      this._onlyDiff = box.checked;
      this._filter();
    });
    label.append(box, document.createTextNode(' only rows that differ'));
    const legend = el('span', 'jwb-jaxpr-legend');
    legend.append(
      el('span', 'jwb-jaxpr-added', 'added'),
      document.createTextNode(' '),
      el('span', 'jwb-jaxpr-removed', 'removed'),
      document.createTextNode(' '),
      el('span', 'jwb-jaxpr-changed', 'added and removed')
    );
    bar.append(label, legend);
    root.appendChild(bar);

    const list = new VirtualList({
      rowHeight: ROW_HEIGHT,
      overscan: 12,
      maxHeight: MAX_LIST_HEIGHT,
      render: i => this._renderRow(i, cols)
    });
    list.scroller.classList.add('jwb-jaxpr-list');
    this._list = list;
    root.appendChild(list.scroller);
    host.appendChild(root);
    this._filter();
    ctx.interactive();
  }

  private _filter(): void {
    const al = this._al!;
    this._rows = !this._onlyDiff
      ? al.rows
      : al.rows.filter(row => {
          for (let k = 0; k < row.length; k++) {
            if (row[k] < 0 || markOf(al, k, row[k]) !== 'same') {
              return true;
            }
          }
          return false;
        });
    this._list!.setCount(this._rows.length);
  }

  private _renderRow(i: number, cols: string): HTMLElement {
    const row = this._rows[i];
    const node = el('div', 'jwb-jaxpr-crow');
    node.style.gridTemplateColumns = cols;
    node.dataset.crow = String(i);
    for (let k = 0; k < row.length; k++) {
      const e = row[k];
      const flat = this._flats[k];
      const cell = el('div', 'jwb-jaxpr-ccell');
      if (e >= 0 && flat) {
        const r = flat.rows[flat.eqnRow[e]];
        const mark = markOf(this._al!, k, e);
        if (mark !== 'same') {
          cell.classList.add(`jwb-jaxpr-${mark}`);
        }
        cell.dataset.eqn = String(e);
        cell.dataset.mark = mark;
        const code = el('span', 'jwb-jaxpr-code');
        code.style.paddingLeft = `${r.depth * 2}ch`;
        appendSegments(code, rowSegments(flat, r), null);
        cell.appendChild(code);
        cell.title = rowText(flat, r);
      } else {
        cell.classList.add('jwb-jaxpr-gap');
      }
      node.appendChild(cell);
    }
    return node;
  }

  dispose(): void {
    this._list?.dispose();
    this._list = null;
    this._flats = [];
    this._al = null;
    this._rows = [];
  }
}

export function createCompareView(): FeatureView {
  return new CompareView();
}
