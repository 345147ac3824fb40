import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { buildDefUse, varKey } from '../src/jaxpr/defuse';
import {
  ancestors,
  defaultFolds,
  equationText,
  flatten,
  rowSources,
  rowText,
  shownParams,
  visibleRows
} from '../src/jaxpr/rows';
import { buildSearchIndex, search } from '../src/jaxpr/search';
import { fileCellAliases, fileCellKey, sourceLabel } from '../src/jaxpr/source';
import type { UnpackedJaxprPayload } from '../src/jaxpr/types';
import { syntheticPayload } from './jaxpr-synthetic';

const fixture = JSON.parse(
  readFileSync(
    new URL('./fixtures/jaxpr-control-flow.json', import.meta.url),
    'utf8'
  )
) as UnpackedJaxprPayload;

describe('jaxpr rows', () => {
  const flat = flatten(fixture.jaxpr!, fixture.avals);

  it('flattens nested jaxprs in order, in JAX printing style', () => {
    expect(flat.equations).toBe(fixture.stats.equations);
    const texts = flat.rows.map(r => rowText(flat, r));
    expect(texts[0]).toBe('{ lambda ; a:f32[4] b:f32[4]. let');
    expect(texts[1]).toBe('c:f32[4] = sin a');
    expect(texts).toContain('e:f32[] = reduce_sum[axes=(0,)] d');
    expect(texts).toContain('jaxpr={ lambda ; h:f32[] i:f32[]. let');
    expect(texts).toContain('l:f32[] = mul h 2.0:f32[]');
    expect(texts).toContain('in (k, l) }');
    expect(texts[texts.length - 1]).toBe('in (y,) }');
    for (const r of flat.rows) {
      if (r.equation) {
        expect(equationText(flat, r.equation)).toBe(rowText(flat, r));
      }
    }
    // the scan equation's params leave out its jaxpr, keep the rest, sorted (as JAX 0.12
    // prints them: its forwarding tables in place of num_carry and num_consts)
    const scan = flat.rows.find(r => r.equation?.primitive === 'scan')!;
    expect(rowText(flat, scan)).toBe(
      'f:f32[] g:f32[4] = scan[ft_in=((), (None,), (None,)) ft_out=((None,), (RightsOnly(Right(None)),)) length=4 reverse=False unroll=1] e a'
    );
    // a jit shows its name only, as JAX prints it, unless an option is not the default
    const jit = flat.rows.find(r => r.equation?.primitive === 'jit')!;
    expect(rowText(flat, jit)).toBe('u:f32[4,4] = jit[name=<lambda>] t');
    const donated = {
      ...jit.equation!,
      params: {
        ...jit.equation!.params,
        donated_invars: '(True,)',
        inline: 'True'
      }
    };
    expect(shownParams(donated)).toEqual([
      ['donated_invars', '(True,)'],
      ['inline', 'True'],
      ['name', '<lambda>']
    ]);
    const cond = flat.rows.find(r => r.equation?.primitive === 'cond')!;
    expect(shownParams(cond.equation!).map(p => p[0])).not.toContain(
      'branches'
    );
    // cond has two branches: two nested open rows at depth 1 after it
    const condRow = flat.rows.indexOf(cond);
    expect(flat.rows[condRow + 1].kind).toBe('open');
    expect(flat.rows[condRow + 1].param).toMatch(/^branches\[/);
    expect(flat.rows[flat.rows[condRow + 1].end + 1].param).toMatch(
      /^branches\[/
    );
  });

  it('folds nested jaxprs and finds what hides a row', () => {
    const all = visibleRows(flat, new Set());
    expect(all.length).toBe(flat.rows.length);
    const scanOpen = flat.rows.findIndex(
      r => r.kind === 'open' && r.param === 'jaxpr' && r.depth === 1
    );
    const folded = visibleRows(flat, new Set([scanOpen]));
    const hidden = flat.rows[scanOpen].end - scanOpen;
    expect(folded.length).toBe(all.length - hidden);
    expect([...folded]).toContain(scanOpen);
    expect([...folded]).not.toContain(scanOpen + 1);
    expect(rowText(flat, flat.rows[scanOpen], true)).toBe(
      'jaxpr={ lambda ; h:f32[] i:f32[]. let … 3 equations … in (k, l) }'
    );
    expect(ancestors(flat, scanOpen + 1)).toEqual([scanOpen, 0]);
    // the top-level jaxpr never folds
    expect(visibleRows(flat, new Set([0])).length).toBe(all.length);
    expect(defaultFolds(flat, 0).size).toBe(
      flat.rows.filter(r => r.kind === 'open' && r.depth > 0).length
    );
    expect(defaultFolds(flat, 1).size).toBe(0);
  });

  it('indexes definitions and uses of every variable', () => {
    const du = buildDefUse(flat);
    const t = du.get(varKey(0, 'd'))!;
    expect(t.defs.map(r => rowText(flat, flat.rows[r]))).toEqual([
      'd:f32[4] = mul c b'
    ]);
    expect(t.uses.map(r => rowText(flat, flat.rows[r]))).toEqual([
      'e:f32[] = reduce_sum[axes=(0,)] d'
    ]);
    // an input of a nested jaxpr is defined on its open row; a result is used on the close row
    const scan = flat.rows.findIndex(
      r => r.kind === 'open' && r.param === 'jaxpr' && r.depth === 1
    );
    const h = du.get(varKey(scan, 'h'))!;
    expect(h.defs).toEqual([scan]);
    expect(flat.rows[du.get(varKey(scan, 'k'))!.uses[0]].kind).toBe('close');
    expect(du.get(varKey(0, 'h'))).toBeUndefined(); // h is the scan body's, not the top level's
  });

  it('labels sources as cells and files', () => {
    const cells = {
      '<ipython-input-1>': { number: 7, cell_id: 'abc' },
      '/x/nocount.py': { number: null, cell_id: 'z' }
    };
    const src = {
      file: '<ipython-input-1>',
      line: 3,
      column: 0,
      function: 'f'
    };
    expect(sourceLabel(cells, src)).toBe('cell [7] line 3');
    expect(sourceLabel({}, { ...src, file: '<workbench-cell-12>' })).toBe(
      'cell [12] line 3'
    );
    expect(sourceLabel({}, { ...src, file: '/home/u/model.py' })).toBe(
      'model.py:3'
    );
    expect(sourceLabel(cells, { ...src, file: '/x/nocount.py' })).toBe(
      'cell line 3'
    );
    expect(fileCellKey(cells, '<ipython-input-1>')).toBe('abc');
    expect(fileCellKey({}, '<workbench-cell-4>')).toBe('#4');
    expect(fileCellKey({}, '/home/u/model.py')).toBeNull();
    expect(fileCellAliases(cells, '<ipython-input-1>')).toEqual(['abc', '#7']);
    expect(fileCellAliases({}, '<workbench-cell-4>')).toEqual(['#4']);
  });

  it('groups source lines by cell', () => {
    const p = syntheticPayload(600, 4, 5);
    const f = flatten(p.jaxpr!, p.avals);
    const s = rowSources(f, {});
    expect([...s.linesByCell.keys()]).toEqual(['#5']);
    expect(s.linesByCell.get('#5')!.has(30)).toBe(true);
    expect(s.label[0]).toBe('cell [5] line 30');
    const withIds = rowSources(f, {
      '<workbench-cell-5>': { number: 5, cell_id: 'id-5' }
    });
    expect(withIds.cellOf[0]).toBe('id-5');
  });
});

describe('jaxpr search', () => {
  const flat = flatten(fixture.jaxpr!, fixture.avals);
  const index = buildSearchIndex(flat, rowSources(flat, {}).label);
  const prims = (hits: number[]): string[] =>
    hits.map(e => flat.rows[flat.eqnRow[e]].equation!.primitive);

  it('finds primitives, variables, shapes, params and lines, nested ones too', () => {
    expect(prims(search(index, 'cos'))).toEqual(['cos']);
    expect(prims(search(index, 'f32[4,4]'))).toEqual(['jit', 'dot_general']);
    expect(prims(search(index, 'permutation=(1, 0)'))).toEqual(['transpose']);
    expect(prims(search(index, 'REDUCE_SUM axes=(0, 1)'))).toEqual([
      'reduce_sum'
    ]);
    expect(search(index, 'control_flow.py:13').length).toBeGreaterThan(0);
    expect(search(index, '   ')).toEqual([]);
    expect(search(index, 'nosuchthing')).toEqual([]);
  });
});

describe('jaxpr search over the source text', () => {
  const flat = flatten(fixture.jaxpr!, fixture.avals);
  const src = flat.rows[flat.eqnRow[0]].equation!.source!;
  const sameLine = (e: number): boolean => {
    const s = flat.rows[flat.eqnRow[e]].equation!.source;
    return !!s && s.file === src.file && s.line === src.line;
  };
  const onLine = Array.from({ length: flat.equations }, (_, e) => e).filter(
    sameLine
  );

  it("matches each equation's line as the user wrote it", () => {
    const texts = {
      [src.file]: { [String(src.line)]: 'y = jax.nn.softmax(x)' }
    };
    const sources = rowSources(flat, {}, texts);
    expect(sources.text[0]).toBe('y = jax.nn.softmax(x)');
    const index = buildSearchIndex(flat, sources.label, sources.text);
    expect(search(index, 'softmax')).toEqual(onLine);
    expect(search(index, 'SOFTMAX(x)')).toEqual(onLine);
    // without the payload's lines (an older payload) the text is simply not searched
    const old = buildSearchIndex(flat, rowSources(flat, {}).label);
    expect(search(old, 'softmax')).toEqual([]);
  });

  it('finds a primitive by its own text, not every equation of a line naming it', () => {
    const prim = flat.rows[flat.eqnRow[0]].equation!.primitive;
    const texts = {
      [src.file]: { [String(src.line)]: `y = ${prim}(x) + zzunique` }
    };
    const sources = rowSources(flat, {}, texts);
    const withLines = buildSearchIndex(flat, sources.label, sources.text);
    const without = buildSearchIndex(flat, sources.label);
    const own = search(without, prim);
    expect(own.length).toBeGreaterThan(0);
    expect(search(withLines, prim)).toEqual(own);
    expect(onLine.every(e => own.includes(e))).toBe(false);
    // a word only the line holds still finds that line's equations
    expect(search(withLines, 'zzunique')).toEqual(onLine);
  });
});

describe('12,000 equations', () => {
  it('flattens, folds and searches them all', () => {
    // the wall times are in bench/algorithms.bench.ts (and the browser's in
    // benchmarks/bench_extension.py); each step here is one pass over the rows
    const p = syntheticPayload(12000);
    const flat = flatten(p.jaxpr!, p.avals);
    const vis = visibleRows(flat, defaultFolds(flat));
    const sources = rowSources(flat, {});
    expect(flat.equations).toBe(p.stats.equations);
    expect(flat.equations).toBeGreaterThanOrEqual(11900);
    expect(vis.length).toBeLessThan(flat.rows.length); // the scans start folded
    const index = buildSearchIndex(flat, sources.label);
    expect(index.text.length).toBe(flat.equations); // folded ones too
    const hits = search(index, 'tanh f32[16,128]');
    expect(hits.length).toBe(p.stats.histogram.tanh);
    const last = flat.rows[flat.eqnRow[flat.equations - 1]];
    expect(search(index, last.equation!.outvars[0][0] + ':')).toContain(
      flat.equations - 1
    );
    const du = buildDefUse(flat);
    expect(du.size).toBeGreaterThan(11000);
  });
});
