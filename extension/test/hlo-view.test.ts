// @vitest-environment jsdom
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { RenderContext } from '../src/common/featureView';
import type { Payload } from '../src/common/payload';
import type { HloNode, UnpackedHloPayload } from '../src/hlo/types';
import { HUB } from '../src/sourcelines/hub';

import { HLO_MIME, stubDrawing, whileBundle } from './hlo-fixtures';
import { chainGraph, hloNode } from './hlo-synthetic';

const bundle = whileBundle();
const MIME = HLO_MIME;
const WHILE = bundle[MIME] as UnpackedHloPayload;
/** the program's file (the fixture's programs are compiled under a file name of their own) */
const FILE = Object.values(WHILE.graphs)
  .flatMap(g => g.nodes)
  .flatMap(n => n.sources ?? [])[0].file;
/** the entry computation's graph */
const ENTRY = WHILE.module!.computations.find(c => c.entry)!.name;
/** the while loop's body: the graph holding the cond */
const BODY = Object.keys(WHILE.graphs).find(g =>
  WHILE.graphs[g].nodes.some(n => n.opcode === 'conditional')
)!;
/** nodes of graph `g` made by line `line` of the program */
const nodesOfLine = (g: string, line: number): number =>
  WHILE.graphs[g].nodes.filter(n =>
    (n.sources ?? []).some(s => s.file === FILE && s.line === line)
  ).length;

/** the kernel's line after a cut text/plain (workbench/views/_bounds.py left_out_line) */
const LEFT_OUT =
  '[… 140 more lines (6 KB) left out of 145 lines, 8 KB: the full text is .text of the ' +
  'returned object (e.g. _.text or Out[n].text), kept by the kernel, not saved in the notebook]';

/**
 * The bundle as the kernel saves it when the text is cut after `keep` lines: text/plain ends
 * in the left-out line and the payload's text_size says how much was kept (the payload is a
 * copy, `cut` holds it: edit it to stand for a slimmer payload).
 */
function cutBundle(keep: number): {
  lines: string[];
  payload: UnpackedHloPayload;
  cut: Record<string, unknown>;
} {
  const whole = bundle['text/plain'] as string;
  const lines = whole.split('\n');
  const payload = JSON.parse(JSON.stringify(WHILE)) as UnpackedHloPayload;
  payload.text_size = {
    lines: lines.length,
    bytes: whole.length,
    shown_lines: keep,
    shown_bytes: lines.slice(0, keep).join('\n').length
  };
  const cut = {
    ...bundle,
    'text/plain': `${lines.slice(0, keep).join('\n')}\n${LEFT_OUT}`,
    [MIME]: payload
  };
  return { lines, payload, cut };
}

/** Click the first row of the top-fusions table: its node's id and the details it opens. */
async function openTopNode(
  host: HTMLElement
): Promise<{ id: string; details: HTMLElement }> {
  const row = host.querySelector(
    'table.jwb-hlo-top tr[data-node-id]'
  ) as HTMLElement;
  const id = row.getAttribute('data-node-id') as string;
  row.click();
  await new Promise(r => setTimeout(r, 20));
  return {
    id,
    details: host.querySelector('.jwb-hlo-details') as HTMLElement
  };
}

beforeAll(stubDrawing);

afterEach(() => {
  document.body.textContent = '';
});

async function renderWhile(
  cells: RenderContext['cells'] = {},
  shown: Record<string, unknown> = bundle
): Promise<{ host: HTMLElement; ready: () => boolean; dispose: () => void }> {
  // no worker source: jsdom has no Worker, the view lays out on the main thread
  const { HloView } = await import('../src/hlo/output');
  const hloView = (): HloView => new HloView('');
  const host = document.createElement('div');
  document.body.appendChild(host);
  let ready = false;
  const payload = JSON.parse(JSON.stringify(shown[MIME])) as Payload;
  const view = hloView();
  await view.render(host, payload, {
    mimeType: MIME,
    bundle: shown,
    cells,
    outputId: 'jwb-t',
    interactive: () => {
      ready = true;
    }
  });
  await new Promise(r => setTimeout(r, 20));
  return { host, ready: () => ready, dispose: () => view.dispose?.() };
}

describe('hlo view (DOM)', () => {
  it('draws the summary, graph, crumbs and top table with the DOM hooks', async () => {
    const { host, ready, dispose } = await renderWhile();
    const root = host.querySelector('.jwb-hlo') as HTMLElement;
    expect(root).not.toBeNull();
    expect(ready()).toBe(true);
    expect(host.querySelector('canvas.jwb-hlo-canvas')).not.toBeNull();
    expect(Number(root.getAttribute('data-visible-nodes'))).toBeGreaterThan(0);
    expect(host.querySelector('.jwb-hlo-summary')?.textContent).toContain(
      'flops'
    );
    const graphs = [
      ...host.querySelectorAll('.jwb-hlo-crumbs [data-graph]')
    ].map(b => b.getAttribute('data-graph'));
    expect(graphs.sort()).toEqual(Object.keys(WHILE.graphs).sort());
    expect(graphs).toContain(ENTRY);
    expect(graphs).toContain(BODY);
    expect(host.querySelector('button.jwb-hlo-fit')).not.toBeNull();
    expect(host.querySelector('.jwb-hlo-expand-all')).not.toBeNull();
    dispose();
  });

  it('tells what the canvas draws through a read-only accessor on its root', async () => {
    const { host, dispose } = await renderWhile();
    const { DRAWING_ACCESSOR } = await import('../src/hlo/output');
    const root = host.querySelector('.jwb-hlo') as unknown as Record<
      string,
      () => import('../src/hlo/output').HloDrawing | null
    >;
    const d = root[DRAWING_ACCESSOR]();
    expect(d).not.toBeNull();
    const drawing = d as import('../src/hlo/output').HloDrawing;
    expect(drawing.graph).toBe(ENTRY);
    expect(drawing.boxes.length).toBe(
      Number(
        (root as unknown as HTMLElement).getAttribute('data-visible-nodes')
      )
    );
    expect(drawing.rects.length).toBe(drawing.boxes.length);
    for (const [a, b] of drawing.edges) {
      expect(a).toBeLessThan(drawing.boxes.length);
      expect(b).toBeLessThan(drawing.boxes.length);
    }
    // a copy: changing it changes the next reading in nothing
    drawing.boxes.length = 0;
    expect(root[DRAWING_ACCESSOR]()?.boxes.length).toBe(drawing.rects.length);
    dispose();
  });

  it('copies and downloads the whole text when text/plain holds all of it', async () => {
    const { io } = await import('../src/common/textActions');
    const copied: string[] = [];
    const saved: Array<[string, string]> = [];
    const { copy, download } = io;
    io.copy = (t: string) => {
      copied.push(t);
      return Promise.resolve();
    };
    io.download = (t: string, name: string) => {
      saved.push([t, name]);
    };
    try {
      const { host, dispose } = await renderWhile();
      const row = host.querySelector('.jwb-text-actions') as HTMLElement;
      expect(row.querySelector('.jwb-text-note')).toBeNull();
      (row.querySelector('.jwb-text-copy') as HTMLButtonElement).click();
      (row.querySelector('.jwb-text-download') as HTMLButtonElement).click();
      await new Promise(r => setTimeout(r, 0));
      expect(copied).toEqual([bundle['text/plain']]);
      expect(saved[0][0]).toBe(bundle['text/plain']);
      expect(saved[0][1]).toMatch(/\.hlo\.txt$/);
      expect(row.querySelector('.jwb-text-status')?.textContent).toBe('copied');
      dispose();
    } finally {
      io.copy = copy;
      io.download = download;
    }
  });

  it('rebuilds an instruction past the saved lines of a cut text and says where the rest is', async () => {
    const keep = 3;
    const { lines, cut } = cutBundle(keep);
    const { host, dispose } = await renderWhile({}, cut);
    const row = host.querySelector('.jwb-text-actions') as HTMLElement;
    expect(row.querySelector('.jwb-text-copy')?.textContent).toBe(
      'copy saved lines'
    );
    const note = row.querySelector('.jwb-text-note')?.textContent ?? '';
    expect(note).toContain(`first ${keep} of ${lines.length} lines`);
    expect(note).toContain('_.text');
    const { id, details } = await openTopNode(host);
    const ins = details.querySelector('.jwb-hlo-instruction')?.textContent;
    expect(ins).toContain(`%${id} = `);
    // rebuilt from the parsed module: the same instruction as its line in the whole text
    const line = lines.find(l => l.includes(`%${id} = `)) as string;
    expect(line.trim().startsWith((ins as string).split(' = ')[0])).toBe(true);
    expect(details.textContent).toContain('not in the saved text');
    dispose();
  });

  it('says a fused computation the slim payload dropped is only in .text, without claiming to rebuild it', async () => {
    // the kernel's payload for a cut text (workbench/views/hlo.py hlo_data): computations
    // without a graph keep name, lines and size but lose their instruction rows
    const { payload, cut } = cutBundle(3);
    const dropped = new Map<string, number>();
    for (const c of payload.module!.computations) {
      if (!(c.name in payload.graphs)) {
        dropped.set(c.name, c.instructions!.length);
        delete c.instructions;
      }
    }
    const { host, dispose } = await renderWhile({}, cut);
    const { details } = await openTopNode(host);
    const head = [...details.querySelectorAll('.jwb-hlo-details-head')]
      .map(h => h.textContent ?? '')
      .find(t => t.startsWith('fused computation '));
    expect(head).toBeDefined();
    const name = (head as string).slice('fused computation '.length);
    expect(dropped.has(name)).toBe(true);
    // no rows to show: none drawn, and the note says where they are, not "rebuilt"
    expect(details.querySelector('.jwb-hlo-fused')).toBeNull();
    const notes = [...details.querySelectorAll('.jwb-hlo-dim')].map(
      n => n.textContent ?? ''
    );
    const note = notes.find(t =>
      t.includes(`(${dropped.get(name)} instructions)`)
    );
    expect(note).toBeDefined();
    expect(note).toContain('.text');
    expect(note).not.toContain('rebuilt');
    dispose();
  });

  it('draws a payload saved before the bound (version 2: no text_size, no sizes)', async () => {
    const old = JSON.parse(JSON.stringify(WHILE)) as Record<string, unknown>;
    old.version = 2;
    delete old.text_size;
    for (const c of (old as unknown as UnpackedHloPayload).module!
      .computations) {
      delete (c as unknown as Record<string, unknown>).size;
    }
    const { versionProblem } = await import('../src/common/payload');
    expect(versionProblem('hlo', old)).toBeNull();
    const { host, dispose } = await renderWhile({}, { ...bundle, [MIME]: old });
    const row = host.querySelector('.jwb-text-actions') as HTMLElement;
    expect(row.querySelector('.jwb-text-copy')?.textContent).toBe('copy text');
    expect(row.querySelector('.jwb-text-note')).toBeNull();
    const { id, details } = await openTopNode(host);
    expect(
      details.querySelector('.jwb-hlo-instruction')?.textContent
    ).toContain(`%${id} = `);
    expect(details.querySelector('.jwb-hlo-fused')?.textContent).toContain(
      'ROOT'
    );
    expect(details.textContent).not.toContain('not in the saved text');
    dispose();
  });

  it('selects a node from the top table and shows its instruction and fused text', async () => {
    const { host, dispose } = await renderWhile();
    const root = host.querySelector('.jwb-hlo') as HTMLElement;
    const { id, details } = await openTopNode(host);
    expect(root.getAttribute('data-selected')).toBe(id);
    expect(
      details.querySelector('.jwb-hlo-instruction')?.textContent
    ).toContain(`%${id} = `);
    expect(details.querySelector('.jwb-hlo-fused')?.textContent).toContain(
      'ROOT'
    );
    dispose();
  });

  it('searches, opens a body from the crumbs, and links lines both ways through the hub', async () => {
    const file = Object.values(WHILE.graphs)
      .flatMap(g => g.nodes)
      .flatMap(n => n.sources ?? [])[0];
    const cells = { [file.file]: { number: 5, cell_id: 'cell-5' } };
    const published: unknown[] = [];
    const off = HUB.onSelect(s => published.push(s));
    const { host, dispose } = await renderWhile(cells);
    const root = host.querySelector('.jwb-hlo') as HTMLElement;
    const input = host.querySelector(
      'input.jwb-hlo-search'
    ) as HTMLInputElement;
    input.value = 'reduce';
    input.dispatchEvent(new Event('input'));
    expect(host.querySelector('.jwb-hlo-search-count')?.textContent).toMatch(
      /^[1-9]\d* match/
    );
    input.value = `cell [5] line ${file.line}`;
    input.dispatchEvent(new Event('input'));
    expect(host.querySelector('.jwb-hlo-search-count')?.textContent).toMatch(
      /^[1-9]\d* match/
    );
    // a line selected in the editor lights the nodes it made
    HUB.select({
      cell: 'cell-5',
      lines: [file.line],
      origin: 'editor',
      reveal: false
    });
    expect(Number(root.getAttribute('data-highlighted'))).toBeGreaterThan(0);
    HUB.select(null);
    expect(root.getAttribute('data-highlighted')).toBe('0');
    // selecting a node publishes its lines
    await openTopNode(host);
    expect(
      published.some(s => (s as { origin?: string } | null)?.origin === 'hlo')
    ).toBe(true);
    // bodies as sub-graphs
    (
      host.querySelector(
        `.jwb-hlo-crumbs [data-graph="${BODY}"]`
      ) as HTMLElement
    ).click();
    await new Promise(r => setTimeout(r, 20));
    expect(root.getAttribute('data-current-graph')).toBe(BODY);
    expect(host.querySelectorAll(`[data-graph="${BODY}"]`).length).toBe(1);
    expect(
      host.querySelector('.jwb-hlo-crumb-current')?.getAttribute('data-graph')
    ).toBe(BODY);
    off();
    dispose();
  });

  it('re-links the selected line when another graph is shown (no stale node indices)', async () => {
    const cells = { [FILE]: { number: 7, cell_id: 'cell-7' } };
    const { host, dispose } = await renderWhile(cells);
    const root = host.querySelector('.jwb-hlo') as HTMLElement;
    const show = async (graph: string): Promise<void> => {
      (
        host.querySelector(
          `.jwb-hlo-crumbs [data-graph="${graph}"]`
        ) as HTMLElement
      ).click();
      await new Promise(r => setTimeout(r, 20));
      expect(root.getAttribute('data-current-graph')).toBe(graph);
    };
    // the line of the cond: nodes of the body and of each branch, none of the entry
    const condNode = WHILE.graphs[BODY].nodes.find(
      n => n.opcode === 'conditional'
    )!;
    const line = condNode.sources![0].line;
    const branch = condNode.called![0];
    const expected = [ENTRY, BODY, branch].map(g => nodesOfLine(g, line));
    expect(new Set(expected).size).toBe(3); // three graphs, three answers
    HUB.select({
      cell: 'cell-7',
      lines: [line],
      origin: 'editor',
      reveal: false
    });
    expect(root.getAttribute('data-highlighted')).toBe(String(expected[0]));
    await show(BODY);
    expect(root.getAttribute('data-highlighted')).toBe(String(expected[1]));
    await show(branch);
    expect(root.getAttribute('data-highlighted')).toBe(String(expected[2]));
    await show(ENTRY);
    expect(root.getAttribute('data-highlighted')).toBe(String(expected[0]));
    HUB.select(null);
    dispose();
  });

  it('a click while a big layout is pending acts on the box drawn, not on the next drawing', async () => {
    // scope a: 450 ops (folded at first), scope b: 5 ops (open); opening a makes 455 boxes,
    // laid out asynchronously (off the main thread in the browser, a timer here)
    const nodes: HloNode[] = [];
    const add = (id: string, op: string): void => {
      nodes.push(hloNode(id, { op_name: op }));
    };
    for (let i = 0; i < 450; i++) {
      add(`a${i}`, 'jit(f)/jit(a)/add');
    }
    for (let i = 0; i < 5; i++) {
      add(`b${i}`, 'jit(f)/jit(b)/mul');
    }
    const base = bundle[MIME] as Record<string, unknown>;
    const payload = {
      ...base,
      graphs: { 'main.1': chainGraph('main.1', nodes) },
      module: { name: 'm', problems: [], computations: [] }
    };
    const { HloView } = await import('../src/hlo/output');
    const view = new HloView('');
    const host = document.createElement('div');
    document.body.appendChild(host);
    await view.render(host, payload as unknown as Payload, {
      mimeType: MIME,
      bundle: { 'text/plain': '' },
      cells: {},
      outputId: 'jwb-t2',
      interactive: () => undefined
    });
    await new Promise(r => setTimeout(r, 20));
    const root = host.querySelector('.jwb-hlo') as HTMLElement;
    expect(root.getAttribute('data-visible-nodes')).toBe('6'); // [a] b0 .. b4
    const click = (item: number): void =>
      (view as unknown as { _clickItem(i: number): void })._clickItem(item);
    click(0); // open a: 455 boxes, layout pending
    expect(root.getAttribute('data-visible-nodes')).toBe('455');
    click(3); // the drawing still shows [a] b0 b1 b2 ...: box 3 is b2
    expect(root.getAttribute('data-selected')).toBe('b2');
    await new Promise(r => setTimeout(r, 50));
    view.dispose();
  });

  it('offers no Collapse/Expand that would change nothing', async () => {
    const { host, dispose } = await renderWhile();
    const root = host.querySelector('.jwb-hlo') as HTMLElement;
    const btn = host.querySelector(
      'button.jwb-hlo-expand-all'
    ) as HTMLButtonElement;
    // the loop's body: its one cluster (while / body) is open from the start; nothing to
    // expand or fold
    (
      host.querySelector(
        `.jwb-hlo-crumbs [data-graph="${BODY}"]`
      ) as HTMLElement
    ).click();
    await new Promise(r => setTimeout(r, 20));
    const before = root.getAttribute('data-visible-nodes');
    expect(btn.disabled).toBe(true);
    btn.click();
    await new Promise(r => setTimeout(r, 20));
    expect(root.getAttribute('data-visible-nodes')).toBe(before);
    dispose();
  });

  it('labels the colour legend with the quantile shares it uses', async () => {
    const { host, dispose } = await renderWhile();
    const { DEFAULT_FRACTIONS } = await import('../src/hlo/heat');
    const steps = [...host.querySelectorAll('.jwb-hlo-legend-step')].map(
      e => e.textContent
    );
    const top = [...DEFAULT_FRACTIONS]
      .reverse()
      .map(f => `top ${Math.round(f * 100)}%`);
    expect(steps).toEqual(['rest', ...top]);
    dispose();
  });

  it('is marked interactive only once a graph is drawn, even when its first layout was superseded', async () => {
    // 300 loose ops and a folded 70-op scope: 301 boxes, laid out asynchronously; 'Open a
    // level' clicked before that layout arrives replaces it
    const nodes: HloNode[] = [];
    const add = (id: string, op: string): void => {
      nodes.push(hloNode(id, { op_name: op }));
    };
    for (let i = 0; i < 300; i++) {
      add(`a${i}`, `jit(f)/op${i}`);
    }
    for (let i = 0; i < 70; i++) {
      add(`b${i}`, 'jit(f)/jit(b)/mul');
    }
    const base = bundle[MIME] as Record<string, unknown>;
    const payload = {
      ...base,
      graphs: { 'main.1': chainGraph('main.1', nodes) },
      module: { name: 'm', problems: [], computations: [] }
    };
    const { HloView } = await import('../src/hlo/output');
    const view = new HloView('');
    const host = document.createElement('div');
    document.body.appendChild(host);
    const raf = globalThis.requestAnimationFrame;
    globalThis.requestAnimationFrame = ((cb: FrameRequestCallback) => {
      cb(performance.now());
      return 0;
    }) as typeof requestAnimationFrame;
    let statusWhenReady: string | null = null;
    try {
      const done = view.render(host, payload as unknown as Payload, {
        mimeType: MIME,
        bundle: { 'text/plain': '' },
        cells: {},
        outputId: 'jwb-t3',
        interactive: () => {
          statusWhenReady =
            host.querySelector('.jwb-hlo-status')?.textContent ?? '';
        }
      });
      const root = host.querySelector('.jwb-hlo') as HTMLElement;
      expect(root.getAttribute('data-visible-nodes')).toBe('301');
      (
        host.querySelector('button.jwb-hlo-expand-all') as HTMLButtonElement
      ).click();
      await done;
      await new Promise(r => setTimeout(r, 50));
    } finally {
      globalThis.requestAnimationFrame = raf;
    }
    expect(statusWhenReady).not.toBeNull();
    expect(statusWhenReady).not.toMatch(/^laying out/);
    expect(statusWhenReady).toContain('370 boxes shown');
    view.dispose();
  });
});
