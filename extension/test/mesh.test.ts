import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { fmtBytes } from '../src/bench/format';
import {
  collectiveRows,
  deviceGroups,
  diffLines,
  groupsText,
  memoryCells,
  timingsText,
  type MeshExplorerPayload
} from '../src/mesh/model';

const load = (name: string): MeshExplorerPayload =>
  JSON.parse(
    readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')
  ) as MeshExplorerPayload;

describe('mesh explorer view model (payloads from the explorer engine on 8 CPU devices)', () => {
  it('lists the all-reduce XLA inserted for x @ y with the contraction split over model', () => {
    const p = load('mesh-allreduce');
    expect(p.collectives.length).toBeGreaterThan(0);
    const rows = collectiveRows(p.collectives);
    const ar = rows.find(r => r[0].startsWith('all-reduce'))!;
    expect(ar[0]).toBe("all-reduce over 'model'");
    expect(ar[3]).toBe('{0,1,2,3} {4,5,6,7}');
    expect(
      groupsText(
        {
          ...p.collectives[0],
          groups: Array.from({ length: 10 }, (_, i) => [i]),
          pairs: null
        },
        8
      )
    ).toBe('{0} {1} {2} {3} {4} {5} {6} {7} … (10 groups)');
    // the Python view's labels and order (workbench/views/mesh_explorer.py _memory_cells)
    expect(memoryCells(p.memory).map(c => c[0])).toEqual([
      'arguments',
      'outputs',
      'temporaries',
      'aliased',
      'generated code',
      'peak'
    ]);
    expect(memoryCells(p.memory)[0][1]).toBe(
      fmtBytes(p.memory!.argument_bytes as number)
    );
    expect(
      memoryCells({ ...p.memory!, temp_bytes: null }).map(c => c[0])
    ).not.toContain('temporaries');
    expect(timingsText(p.timings)).toMatch(
      /^trace .* · lower .* · compile .* · total /
    );
  });

  it('outlines a collective-permute by the rings its pairs form, not by pair index', () => {
    const c = load('mesh-allreduce').collectives[0];
    // a permute over 'model' on a 2 x 4 mesh: two rings of four devices
    const ring = [
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 0],
      [4, 5],
      [5, 6],
      [6, 7],
      [7, 4]
    ];
    expect(deviceGroups({ ...c, groups: null, pairs: ring })).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7]
    ]);
    expect(
      deviceGroups({
        ...c,
        groups: null,
        pairs: [
          [0, 4],
          [1, 5]
        ]
      })
    ).toEqual([
      [0, 4],
      [1, 5]
    ]);
    expect(
      deviceGroups({
        ...c,
        groups: [
          [0, 1],
          [2, 3]
        ],
        pairs: null
      })
    ).toEqual([
      [0, 1],
      [2, 3]
    ]);
    expect(deviceGroups({ ...c, groups: null, pairs: null })).toBeNull();
  });

  it('spells the diff from the previous state', () => {
    const p = load('mesh-matmul');
    const lines = diffLines(p.diff);
    expect(lines[0]).toEqual({
      sign: '-',
      text: "all-reduce over 'model' f32[32,32]"
    });
    expect(lines.map(l => l.text)).toContain(
      "output P('data') → P('data', 'model')"
    );
    expect(diffLines(null)).toEqual([]);
    expect(diffLines({ ...p.diff!, changed: false })).toEqual([
      { sign: '', text: 'no change from the previous state' }
    ]);
  });
});
