import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { NodeSearch, parseQuery, topFusions } from '../src/hlo/search';
import {
  formatSource,
  linesByCell,
  nodesForSelection
} from '../src/hlo/sources';
import { calledComputation, HloText } from '../src/hlo/text';
import type {
  HloInstruction,
  HloNode,
  UnpackedHloPayload
} from '../src/hlo/types';

const bundle = JSON.parse(
  readFileSync(
    new URL('./fixtures/hlo-while-bundle.json', import.meta.url),
    'utf8'
  )
) as Record<string, unknown>;
const payload = bundle[
  'application/vnd.jax-workbench.hlo+json'
] as UnpackedHloPayload;

function n(id: string, extra: Partial<HloNode> = {}): HloNode {
  return {
    id,
    kind: 'fusion',
    opcode: 'fusion',
    label: id,
    shape: 'f32[2,4]',
    bytes: 32,
    bytes_moved: 64,
    ...extra
  };
}

const nodes = [
  n('dot.1', {
    opcode: 'dot',
    kind: 'library',
    shape: 'f32[16,128]',
    sources: [{ file: '<workbench-cell-3>', line: 12, function: 'f' }]
  }),
  n('tanh_fusion', {
    fused_ops: ['tanh', 'add'],
    primitives: ['tanh'],
    sources: [{ file: '/x/model.py', line: 12, function: 'g' }],
    bytes_moved: 500
  }),
  n('exp_fusion', {
    sources: [{ file: '/tmp/ipykernel_1/123.py', line: 4, function: 'h' }],
    bytes_moved: 900
  }),
  n('param', { kind: 'parameter', opcode: 'parameter', bytes_moved: 0 })
];
const cells = { '/tmp/ipykernel_1/123.py': { number: 7, cell_id: 'abc' } };

describe('search', () => {
  it('parses line queries', () => {
    expect(parseQuery('cell line 12')).toEqual({
      kind: 'line',
      line: 12,
      cell: 'any',
      file: null
    });
    expect(parseQuery('cell [3] line 12')).toEqual({
      kind: 'line',
      line: 12,
      cell: 3,
      file: null
    });
    expect(parseQuery(':12')).toEqual({
      kind: 'line',
      line: 12,
      cell: null,
      file: null
    });
    expect(parseQuery('model.py:12')).toEqual({
      kind: 'line',
      line: 12,
      cell: null,
      file: 'model.py'
    });
    expect(parseQuery('  ')).toEqual({ kind: 'empty' });
    expect(parseQuery('f32[16,128] dot')).toEqual({
      kind: 'text',
      words: ['f32[16,128]', 'dot']
    });
  });

  it('finds nodes by op, shape, name and source line', () => {
    const s = new NodeSearch(nodes, ['', 'jit(f)/tanh', '', ''], cells);
    expect(s.find('dot')).toEqual([0]);
    expect(s.find('f32[16,128]')).toEqual([0]);
    expect(s.find('TANH add')).toEqual([1]);
    expect(s.find('jit(f)')).toEqual([1]);
    expect(s.find(':12')).toEqual([0, 1]);
    expect(s.find('cell line 12')).toEqual([0]);
    expect(s.find('cell [3] line 12')).toEqual([0]);
    expect(s.find('cell [7] line 4')).toEqual([2]);
    expect(s.find('model.py:12')).toEqual([1]);
    expect(s.find('nothing-like-this')).toEqual([]);
  });

  it('lists the heaviest fusions first', () => {
    expect(topFusions(nodes, 2)).toEqual([2, 1]);
  });
});

describe('sources and text', () => {
  it('names cells as "cell [N] line L" and files as file:line', () => {
    expect(
      formatSource(cells, {
        file: '/tmp/ipykernel_1/123.py',
        line: 4,
        function: 'h'
      })
    ).toBe('cell [7] line 4');
    expect(
      formatSource({}, { file: '<workbench-cell-3>', line: 2, function: 'f' })
    ).toBe('cell [3] line 2');
    expect(
      formatSource({}, { file: '/a/b/c/model.py', line: 9, function: 'g' })
    ).toBe('…/c/model.py:9');
    const by = linesByCell(cells, nodes);
    expect([...by.entries()]).toEqual([
      ['#3', [12]],
      ['abc', [4]]
    ]);
  });

  it("finds an instruction's and a fused computation's text in text/plain", () => {
    const text = new HloText(bundle['text/plain'] as string);
    const comps = payload.module!.computations;
    const entry = comps.find(c => c.entry)!;
    // an instruction of the entry computation that calls a fused computation
    const ins = (entry.instructions as HloInstruction[]).find(i =>
      (i.called ?? []).some(
        c => comps.find(x => x.name === c)?.role === 'fused'
      )
    );
    expect(ins).toBeDefined();
    expect(text.line(ins!.line)).toContain(`%${ins!.name} = `);
    const fused = calledComputation(ins!.called, ins!.attrs);
    const comp = comps.find(c => c.name === fused);
    expect(comp?.role).toBe('fused');
    const body = text.range(comp!.lines[0], comp!.lines[1]);
    expect(body.split('\n')[0]).toContain(fused as string);
    expect(text.range(1, 10, 3).split('\n').pop()).toBe('… 7 more lines');
  });
});

describe('linking', () => {
  it('finds the nodes of a line selected in a cell', () => {
    expect(
      nodesForSelection(cells, nodes, {
        cell: 'abc',
        lines: [4],
        origin: 'editor',
        reveal: false
      })
    ).toEqual([2]);
    expect(
      nodesForSelection(cells, nodes, {
        cell: '#3',
        lines: [12, 13],
        origin: 'editor',
        reveal: true
      })
    ).toEqual([0]);
    expect(
      nodesForSelection(cells, nodes, {
        cell: 'abc',
        lines: [12],
        origin: 'editor',
        reveal: false
      })
    ).toEqual([]);
  });
});
