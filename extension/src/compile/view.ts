/**
 * `application/vnd.jax-workbench.compile-time+json` (`%%jaxprof --compile`): where one real
 * compile went.  The headline (trace, lower, compile), the coverage of XLA's compile by
 * named passes and phases, then three small tables with share bars (XLA's passes and
 * phases, the code generation workers, program size per source line), each cut at the
 * payload's `top` rows, the unrolled-loop advice and the notes.  Every payload string goes
 * through `textContent` (names and source lines are the user's).
 */

import { add, el, headedTable } from '../common/dom';
import { fmtCount, fmtSeconds } from '../bench/format';
import { drawnView } from '../common/featureView';
import {
  coverageLine,
  headline,
  lineCells,
  phaseCells,
  restLine,
  type CompilePhase,
  type CompileTimePayload
} from './model';

const PHASE_HEAD = ['pass or phase', 'kind', 'time', 'share', 'count'];
const LINE_HEAD = ['line', 'equations', 'share', 'instructions', 'share'];

function table(
  head: string[],
  rows: string[][],
  shares: number[],
  numeric: (i: number) => boolean
): HTMLTableElement {
  const [t, body] = headedTable('jwb-table jwb-prof-table', [...head, '']);
  rows.forEach((cells, k) => {
    const row = add(body, el('tr'));
    cells.forEach((c, i) =>
      add(row, el('td', numeric(i) ? 'jwb-prof-num' : undefined, c))
    );
    const bar = add(add(row, el('td')), el('span', 'jwb-prof-bar'));
    bar.style.width = `${Math.max(1, Math.round(100 * Math.min(1, shares[k])))}px`;
  });
  return t;
}

function section(root: HTMLElement, title: string): void {
  add(root, el('div', 'jwb-prof-title', title));
}

/** A table of passes and phases (or workers), `top` rows, then how many more there are. */
function phaseTable(
  root: HTMLElement,
  rows: CompilePhase[],
  total: number,
  top: number,
  noun: string
): void {
  const shown = rows.slice(0, top);
  add(
    root,
    table(
      PHASE_HEAD,
      shown.map(phaseCells),
      shown.map(r => r.share),
      i => i >= 2
    )
  );
  const rest = restLine(total, shown.length, noun);
  if (rest) {
    add(root, el('div', 'jwb-prof-meta', rest));
  }
}

export const compileTimeView = drawnView<CompileTimePayload>(
  'jwb-prof jwb-compile',
  (root, p) => {
    add(root, el('div', 'jwb-prof-head', headline(p)));
    add(root, el('div', 'jwb-prof-coverage', coverageLine(p)));
    const x = p.xla;
    if (x.found && x.phases.length) {
      section(
        root,
        `XLA's compile, top first (self time on its thread, '${x.line}')`
      );
      phaseTable(root, x.phases, x.phases_total, p.top, 'passes and phases');
    }
    if (x.workers.length) {
      section(
        root,
        `inside it, the code generation workers: ${x.worker_threads} threads, ` +
          `${fmtSeconds(x.worker_cpu_s)} of CPU time (shares of that)`
      );
      phaseTable(root, x.workers, x.workers_total, p.top, 'events');
    }
    const s = p.size;
    section(
      root,
      `program size: ${fmtCount(s.equations)} jaxpr equations, ${fmtCount(s.instructions)} ` +
        "instructions in XLA's optimized module, by source line"
    );
    const lines = s.lines.slice(0, p.top);
    add(
      root,
      table(
        LINE_HEAD,
        lines.map(r => lineCells(r, p.cells)),
        lines.map(r => r.instruction_share),
        i => i >= 1
      )
    );
    const rest = restLine(s.lines_total, lines.length, 'lines');
    if (rest) {
      add(root, el('div', 'jwb-prof-meta', rest));
    }
    for (const a of p.advice) {
      add(root, el('div', 'jwb-prof-note jwb-compile-advice', `advice: ${a}`));
    }
    for (const n of p.notes) {
      add(root, el('div', 'jwb-prof-meta', `note: ${n}`));
    }
  }
);
