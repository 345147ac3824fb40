// @vitest-environment jsdom
/**
 * How fast are the extension's algorithms on the largest inputs the unit tests use, next to
 * a plain pass over the same input?
 *
 * Run by hand (not part of the test suite; about a minute), from extension/:
 *
 *     npx vitest bench --run bench/algorithms.bench.ts
 *
 * The unit tests check what these compute and, where the work could blow up, a count of it
 * (diff's step budget, the layout's dummy-node cap, the rows the jaxpr view draws); the
 * wall times live here, where a busy machine makes a slow number, not a failed test.
 *
 * Each group measures, in the same run, the subject and a *reference*: the plain pass any
 * implementation pays for that input (parsing it from JSON as it arrives from the kernel,
 * interning or sorting its keys once).  Vitest's summary prints, per group, the ratio of
 * the two ("x faster than"), whichever is faster: that ratio, not the milliseconds, is what
 * compares across machines (the table's mean column gives the milliseconds).  A blowup (a
 * quadratic diff, a layout pass per dummy per sweep, a render of every row) shows as a ratio
 * that grows tens of times; the browser's own figures and their targets (jaxpr first paint
 * <= 1 s, search <= 200 ms, layout of 10,000 nodes <= 5 s) are in
 * benchmarks/bench_extension.py.
 *
 * Inputs (the unit tests'): two 12,000-equation programs a few hundred edits apart and a
 * 12,000-equation function against a 36,000-equation gradient (jaxpr-compare.test.ts), a
 * 10,000-node HLO-like DAG (hlo-layout.test.ts), 10,000 ops with 250 repeated layers of 40
 * lines (hlo-cluster.test.ts), the synthetic 12,000-equation jaxpr (jaxpr-rows.test.ts,
 * jaxpr-view.test.ts), 2,000 sharded arrays of 8 shards (sharding.test.ts), and the side
 * panel's ledger of 10,000 records (what tests/chromium/test_sidepanel_browser.py filters).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bench, describe } from 'vitest';

import type { Payload } from '../src/common/payload';
import type { RenderContext } from '../src/common/featureView';
import { indexGraph } from '../src/hlo/graph';
import { layeredLayout } from '../src/hlo/layout';
import { splitRepeats } from '../src/hlo/repeats';
import type { HloNode } from '../src/hlo/types';
import { align, diff, signatures } from '../src/jaxpr/compare';
import { buildDefUse } from '../src/jaxpr/defuse';
import {
  defaultFolds,
  flatten,
  rowSources,
  visibleRows
} from '../src/jaxpr/rows';
import { buildSearchIndex, search } from '../src/jaxpr/search';
import { jaxprView } from '../src/jaxpr/view';
import {
  DeviceSetColors,
  layoutPicture,
  type ShardingPayload
} from '../src/sharding/model';
import { parseKernelMessage } from '../src/sidepanel/parse';
import { NO_FILTER, WorkbenchStore } from '../src/sidepanel/store';
import { hloNode, syntheticGraph } from '../test/hlo-synthetic';
import { functionAndGradient, syntheticPayload } from '../test/jaxpr-synthetic';
import { record } from '../test/sidepanel-fixtures';

/** few, long iterations: each call takes from milliseconds to a second */
const OPTS = { time: 1000, iterations: 5, warmupIterations: 1 };

/** a hashing pass over both sequences: the least any diff of them does */
function internBoth(a: string[], b: string[]): number {
  const ids = new Map<string, number>();
  for (const s of a) {
    if (!ids.has(s)) {
      ids.set(s, ids.size);
    }
  }
  for (const s of b) {
    if (!ids.has(s)) {
      ids.set(s, ids.size);
    }
  }
  return ids.size;
}

/** `subject` on sequences `a` and `b`, timed next to its reference: interning both */
function benchAgainstInterning(
  name: string,
  a: string[],
  b: string[],
  subject: () => void
): void {
  bench(
    'reference: intern both sequences',
    () => {
      internBoth(a, b);
    },
    OPTS
  );
  bench(name, subject, OPTS);
}

describe('align two 12,000-equation programs, a few hundred edits apart', () => {
  const p = syntheticPayload(12000);
  const a = signatures(flatten(p.jaxpr!, p.avals));
  const b = a.slice();
  for (let i = 0; i < b.length; i += 97) {
    b[i] = 'neg f32[16,128]';
  }
  b.splice(5000, 0, 'custom f32[]');
  benchAgainstInterning('align', a, b, () => {
    align([a, b]);
  });
});

describe('diff a 12,000-equation function and its 36,000-equation gradient', () => {
  const { a, b } = functionAndGradient();
  benchAgainstInterning('diff', a, b, () => {
    diff(a, b);
  });
});

describe('layered layout of a 10,000-node graph', () => {
  const g = syntheticGraph(10000);
  // the graph as it arrives from the kernel: JSON arrays (a structured clone of the typed
  // arrays, the post to the layout worker, is too cheap to time steadily)
  const text = JSON.stringify({
    widths: [...g.widths],
    heights: [...g.heights],
    src: [...g.src],
    dst: [...g.dst]
  });
  bench(
    "reference: JSON.parse of the graph's arrays",
    () => {
      JSON.parse(text);
    },
    OPTS
  );
  bench(
    'layeredLayout',
    () => {
      layeredLayout(g);
    },
    OPTS
  );
});

describe('repeats of a 10,000-op scope (strewn lines, then 250 layers)', () => {
  const node = (id: string, line: number): HloNode =>
    hloNode(id, { sources: [{ file: 'm.py', line, function: 'f' }] });
  let seed = 3;
  const rnd = (): number => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  const strewn = Array.from({ length: 10000 }, (_, i) =>
    node(`r${i}`, Math.floor(rnd() * 2000))
  );
  const layered = Array.from({ length: 10000 }, (_, i) =>
    node(`l${i}`, 10 + (i % 40))
  );
  const gs = indexGraph({ computation: 'm', nodes: strewn, edges: [] });
  const gl = indexGraph({ computation: 'm', nodes: layered, edges: [] });
  const all = strewn.map((_, i) => i);
  bench(
    'reference: sort the members by source line',
    () => {
      all
        .slice()
        .sort(
          (p, q) => strewn[p].sources![0].line - strewn[q].sources![0].line
        );
      all
        .slice()
        .sort(
          (p, q) => layered[p].sources![0].line - layered[q].sources![0].line
        );
    },
    OPTS
  );
  bench(
    'splitRepeats',
    () => {
      splitRepeats(gs, all);
      splitRepeats(gl, all);
    },
    OPTS
  );
});

describe('12,000 equations: rows, search, def/use', () => {
  const p = syntheticPayload(12000);
  const text = JSON.stringify(p);
  const flat = flatten(p.jaxpr!, p.avals);
  const labels = rowSources(flat, {}).label;
  const index = buildSearchIndex(flat, labels);
  // one group per step, so that each summary line is that step against the reference
  const steps: Array<[string, () => void]> = [
    [
      'flatten + fold + sources',
      () => {
        const f = flatten(p.jaxpr!, p.avals);
        visibleRows(f, defaultFolds(f));
        rowSources(f, {});
      }
    ],
    ['search index', () => buildSearchIndex(flat, labels)],
    ['search', () => search(index, 'tanh f32[16,128]')],
    ['def/use', () => buildDefUse(flat)]
  ];
  for (const [name, step] of steps) {
    describe(name, () => {
      bench(
        'reference: JSON.parse of the payload',
        () => {
          JSON.parse(text);
        },
        OPTS
      );
      bench(name, step, OPTS);
    });
  }
});

describe('jaxpr view: first render of 12,000 equations (jsdom)', () => {
  const p = syntheticPayload(12000, 24, 3);
  const text = JSON.stringify(p);
  let n = 0;
  bench(
    'reference: JSON.parse of the payload',
    () => {
      JSON.parse(text);
    },
    OPTS
  );
  bench(
    'render',
    () => {
      const host = document.createElement('div');
      document.body.appendChild(host);
      const ctx: RenderContext = {
        mimeType: 'application/vnd.jax-workbench.jaxpr+json',
        bundle: {},
        cells: {},
        outputId: `bench-${n++}`,
        interactive: () => undefined
      };
      const view = jaxprView();
      view.render(host, p as unknown as Payload, ctx);
      view.dispose?.();
      host.remove();
    },
    OPTS
  );
});

describe('sharding: pictures of 2,000 arrays of 8 shards', () => {
  const tree = JSON.parse(
    readFileSync(join(__dirname, '../test/fixtures/sharding-tree.json'), 'utf8')
  ) as ShardingPayload;
  const w = tree.layouts.find(l => l.path === "['w']")!;
  const layouts = Array.from({ length: 2000 }, (_, i) => ({
    ...w,
    path: `['p${i}']`
  }));
  const text = JSON.stringify(layouts);
  bench(
    'reference: JSON.parse of the layouts',
    () => {
      JSON.parse(text);
    },
    OPTS
  );
  bench(
    'layoutPicture',
    () => {
      const colors = new DeviceSetColors();
      for (const l of layouts) {
        layoutPicture(l, colors);
      }
    },
    OPTS
  );
});

describe('side panel: the ledger of 10,000 records, filtered and unfiltered', () => {
  const data = {
    protocol: 1,
    type: 'update',
    records: Array.from({ length: 10000 }, (_, i) => record(i))
  };
  const text = JSON.stringify(data);
  const msg = parseKernelMessage(data);
  const store = new WorkbenchStore();
  if (msg.type === 'update') {
    store.apply(msg.batch);
  }
  bench(
    'reference: JSON.parse of the records',
    () => {
      JSON.parse(text);
    },
    OPTS
  );
  // two filters in turn, so that the store's cache of the last rows never answers
  bench(
    'rows, filtered to f9 then all',
    () => {
      store.rows({ ...NO_FILTER, text: 'f9' });
      store.rows(NO_FILTER);
    },
    OPTS
  );
});
