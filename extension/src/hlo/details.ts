/**
 * The HLO output's details pane: what the selected box is.  For a folded cluster its kind,
 * size and bytes; for an instruction its facts, source lines (a cell's line is a button
 * that selects it in the source-line hub), the open clusters around it (a click folds one),
 * the bodies it calls (a click opens one) and its text in the module, with the fused
 * computation's text for a fusion.  Every payload string goes in as text.
 */

import type { CellMap } from '../common/cells';
import { el } from '../common/dom';
import { HUB } from '../sourcelines/hub';
import { clusterPath, type Cluster } from './cluster';
import { formatBytes } from './heat';
import type { GraphModel } from './model';
import { button } from './sections';
import { cellKeyOf, formatSource } from './sources';
import {
  calledComputation,
  rebuiltCompact,
  rebuiltInstruction,
  type HloText
} from './text';
import type { HloNode, UnpackedHloPayload as HloPayload } from './types';

/** What the details of an instruction read, and what their buttons do. */
export interface NodeDetails {
  payload: HloPayload;
  model: GraphModel;
  cells: CellMap;
  text: HloText;
  /** fold open cluster `c` back into its box */
  fold(c: number): void;
  /** show the body computation `name` as the graph */
  openBody(name: string): void;
}

/** A facts table and the function that adds a row to it. */
function factsTable(): {
  table: HTMLElement;
  fact: (k: string, v: string) => void;
} {
  const table = el('table', 'jwb-hlo-facts');
  const fact = (k: string, v: string): void => {
    const tr = el('tr');
    tr.append(el('th', undefined, k), el('td', undefined, v));
    table.appendChild(tr);
  };
  return { table, fact };
}

/** Fill `d` with a folded cluster's details. */
export function showCluster(d: HTMLElement, cl: Cluster): void {
  d.textContent = '';
  d.appendChild(el('div', 'jwb-hlo-details-title', cl.label));
  const { table, fact } = factsTable();
  fact(
    'kind',
    cl.kind === 'instance'
      ? `call ${cl.index} of ${cl.name}`
      : cl.kind === 'group'
        ? 'group'
        : 'op_name scope'
  );
  fact('instructions', String(cl.size));
  fact('bytes moved', `${formatBytes(cl.bytesMoved)} (estimated)`);
  d.appendChild(table);
}

/** Fill `d` with instruction `node`'s details. */
export function showNode(
  d: HTMLElement,
  node: HloNode,
  ctx: NodeDetails
): void {
  d.textContent = '';
  d.appendChild(el('div', 'jwb-hlo-details-title', node.id));
  d.appendChild(el('div', 'jwb-hlo-details-label', node.label));
  const i = ctx.model.g.index.get(node.id);
  d.appendChild(nodeFacts(node, i !== undefined ? ctx.model.g.opNames[i] : ''));
  const srcs = node.sources ?? [];
  if (srcs.length || node.source_lost) {
    d.appendChild(el('div', 'jwb-hlo-details-head', 'source lines'));
    d.appendChild(sourceList(node, ctx.cells));
  }
  const inner = i !== undefined ? ctx.model.tree.nodeCluster[i] : -1;
  if (inner >= 0) {
    d.appendChild(openScopes(ctx, inner));
  }
  const bodies = (node.called ?? []).filter(c => c in ctx.payload.graphs);
  if (bodies.length) {
    d.appendChild(bodyButtons(ctx, bodies));
  }
  instructionText(d, node, ctx);
}

/** kind, shape, result and moved bytes, fused ops, primitives, op_name. */
function nodeFacts(node: HloNode, opName: string): HTMLElement {
  const { table, fact } = factsTable();
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
  if (opName) {
    fact('op_name', opName);
  }
  return table;
}

/** The node's source lines: a cell's line is a button that selects it in its cell. */
function sourceList(node: HloNode, cells: CellMap): HTMLElement {
  const ul = el('ul', 'jwb-hlo-sources');
  for (const s of node.sources ?? []) {
    const li = el('li');
    const key = cellKeyOf(cells, s.file);
    const text = `${formatSource(cells, s)}${s.function ? ` (${s.function})` : ''}`;
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
  return ul;
}

/** The open clusters around a node, outermost first: a click folds one back into its box. */
function openScopes(ctx: NodeDetails, inner: number): HTMLElement {
  const row = el('div', 'jwb-hlo-scopes');
  row.appendChild(el('span', undefined, 'in: '));
  for (const c of clusterPath(ctx.model.tree, inner)) {
    const cl = ctx.model.tree.clusters[c];
    const b = button(
      'jwb-hlo-fold',
      `▾ ${cl.label}`,
      'fold this cluster into one box'
    );
    b.addEventListener('click', () => ctx.fold(c));
    row.appendChild(b);
  }
  return row;
}

/** The bodies a node calls (while, cond, call): a click opens one as the graph. */
function bodyButtons(ctx: NodeDetails, bodies: string[]): HTMLElement {
  const row = el('div', 'jwb-hlo-bodies');
  row.appendChild(el('span', undefined, 'bodies: '));
  for (const b of bodies) {
    const bt = button('jwb-hlo-open-body', b, 'open this body as a graph');
    bt.dataset.openGraph = b;
    bt.addEventListener('click', () => ctx.openBody(b));
    row.appendChild(bt);
  }
  return row;
}

/** The note under a rebuilt line: where the exact text is. */
const NOT_SAVED =
  'not in the saved text (the notebook keeps its first lines): rebuilt from the parsed ' +
  "module; the exact text is .text of the cell's result in the kernel";

/** The note under a computation whose rows the payload does not carry either (a big
 * module's fused and applied computations, slimmed by the kernel): nothing to rebuild. */
const NOT_IN_NOTEBOOK =
  'not saved in the notebook (it keeps the first lines of the text and the graphs); ' +
  "the exact text is .text of the cell's result in the kernel";

/** The node's line of the module text and, for a fusion, its fused computation. */
function instructionText(
  d: HTMLElement,
  node: HloNode,
  ctx: NodeDetails
): void {
  const ins = ctx.model.instructions.get(node.id);
  d.appendChild(el('div', 'jwb-hlo-details-head', 'instruction'));
  const saved = !!ins && ins.line > 0 && ctx.text.has(ins.line);
  d.appendChild(
    el(
      'pre',
      'jwb-hlo-code jwb-hlo-instruction',
      saved && ins
        ? ctx.text.line(ins.line).trim()
        : ins
          ? rebuiltInstruction(ins)
          : '(not in the module text)'
    )
  );
  if (ins && !saved && ins.line > 0) {
    d.appendChild(
      el('div', 'jwb-hlo-dim', `line ${ins.line} of the module, ${NOT_SAVED}`)
    );
  }
  if (node.kind === 'fusion' || node.opcode === 'fusion') {
    const name = calledComputation(ins?.called, ins?.attrs);
    const comp = name
      ? ctx.payload.module?.computations.find(c => c.name === name)
      : undefined;
    if (comp) {
      d.appendChild(
        el('div', 'jwb-hlo-details-head', `fused computation ${comp.name}`)
      );
      const [first, last] = comp.lines;
      if (ctx.text.has(first)) {
        d.appendChild(
          el('pre', 'jwb-hlo-code jwb-hlo-fused', ctx.text.range(first, last))
        );
      } else {
        const rows = (comp.instructions ?? []).map(r =>
          Array.isArray(r) ? rebuiltCompact(r) : rebuiltInstruction(r)
        );
        if (rows.length) {
          d.appendChild(
            el('pre', 'jwb-hlo-code jwb-hlo-fused', rows.join('\n'))
          );
        }
        d.appendChild(
          el(
            'div',
            'jwb-hlo-dim',
            `lines ${first}–${last} of the module (${comp.size} instructions), ` +
              (rows.length ? NOT_SAVED : NOT_IN_NOTEBOOK)
          )
        );
      }
    }
  }
}
