/** DOM helpers shared by the jaxpr and compare views (payload text only via textContent). */

import { el } from '../common/dom';
import type { Segment } from './rows';

export { el };

const SEG_CLASS: Record<Segment['kind'], string> = {
  var: 'jwb-jaxpr-v',
  def: 'jwb-jaxpr-v jwb-jaxpr-d',
  type: 'jwb-jaxpr-t',
  lit: 'jwb-jaxpr-lit',
  prim: 'jwb-jaxpr-p',
  param: 'jwb-jaxpr-par',
  kw: 'jwb-jaxpr-kw',
  punct: ''
};

/** Append `segs` to `parent`: spans for the coloured parts, `data-v` on variables. */
export function appendSegments(
  parent: HTMLElement,
  segs: Segment[],
  highlighted: string | null
): void {
  for (const s of segs) {
    const cls = SEG_CLASS[s.kind];
    if (!cls) {
      parent.appendChild(document.createTextNode(s.text));
      continue;
    }
    const span = el('span', cls, s.text);
    if (s.name) {
      span.dataset.v = s.name;
      if (s.name === highlighted) {
        span.classList.add('jwb-jaxpr-vhl');
      }
    }
    parent.appendChild(span);
  }
}

export function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

export function seconds(s: number | null): string {
  if (s === null || s === undefined) {
    return '—';
  }
  return s < 1
    ? `${(s * 1000).toFixed(s < 0.01 ? 1 : 0)} ms`
    : `${s.toFixed(2)} s`;
}
