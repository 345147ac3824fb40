import { describe, expect, it } from 'vitest';

import { lineColor, lineColors } from '../src/sourcelines/colors';
import { SourceLineHub } from '../src/sourcelines/hub';
import {
  cellKeys,
  keyOfLine,
  lineMarks,
  marksKey,
  mergeColors,
  selectedLines
} from '../src/sourcelines/lines';

describe('line colours', () => {
  it('gives a line the same colour whatever else is linked', () => {
    const a = lineColors([3, 5, 9]);
    const b = lineColors([5, 1]);
    expect(a.get(5)).toBe(b.get(5));
    expect(a.get(5)).toBe(lineColor(5));
    expect(
      new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map(l => lineColor(l)))
        .size
    ).toBe(12);
    expect(lineColor(3, 1)).toMatch(/^var\(--jp-/);
    expect(lineColor(3)).toMatch(/color-mix\(in srgb, var\(--jp-/);
    expect([...lineColors([0, -1, 2]).keys()]).toEqual([2]);
  });
});

describe('hub colours with owners', () => {
  it('takes back what an output coloured when it is released', () => {
    const hub = new SourceLineHub();
    const seen: number[][] = [];
    hub.onColor(c => seen.push([...c.colors.keys()].sort()));
    hub.color(
      {
        cell: 'c1',
        colors: new Map([
          [1, 'red'],
          [2, 'blue']
        ])
      },
      'out-1'
    );
    hub.color(
      {
        cell: 'c1',
        colors: new Map([
          [2, 'green'],
          [3, 'gray']
        ])
      },
      'out-2'
    );
    expect([...hub.colorsOf('c1').keys()].sort()).toEqual([1, 2, 3]);
    hub.release('out-2');
    expect([...hub.colorsOf('c1')]).toEqual([
      [1, 'red'],
      [2, 'blue']
    ]);
    hub.release('out-1');
    expect(hub.colorsOf('c1').size).toBe(0);
    expect(seen[seen.length - 1]).toEqual([]);
    // owner-less colours stay
    hub.color({ cell: 'c2', colors: new Map([[4, 'red']]) });
    hub.release('nobody');
    expect(hub.colorsOf('c2').get(4)).toBe('red');
  });
});

describe('hub colours with and without owners', () => {
  it('keeps a line an owner-less output coloured when an owner of the same line is released', () => {
    // the HLO view colours without an owner; the jaxpr view of the same cell with one
    const hub = new SourceLineHub();
    hub.color({
      cell: 'c',
      colors: new Map([
        [3, 'hlo'],
        [4, 'hlo']
      ])
    });
    hub.color(
      {
        cell: 'c',
        colors: new Map([
          [3, 'jaxpr'],
          [5, 'jaxpr']
        ])
      },
      'out-j'
    );
    hub.release('out-j');
    expect([...hub.colorsOf('c')].sort()).toEqual([
      [3, 'hlo'],
      [4, 'hlo']
    ]);
  });
});

describe('editor line marks', () => {
  const colors = new Map<string, Map<number, string>>([
    [
      'id-1',
      new Map([
        [2, 'A'],
        [3, 'B']
      ])
    ],
    [
      '#4',
      new Map([
        [3, 'C'],
        [7, 'D']
      ])
    ]
  ]);
  const colorsOf = (k: string): Map<number, string> =>
    colors.get(k) ?? new Map();

  it('answers to the cell id and the execution count', () => {
    expect(cellKeys('id-1', 4)).toEqual(['id-1', '#4']);
    expect(cellKeys('', null)).toEqual([]);
    expect(cellKeys(undefined, 0)).toEqual(['#0']);
  });

  it('merges colours under both keys, the id winning', () => {
    expect([...mergeColors(['id-1', '#4'], colorsOf)].sort()).toEqual([
      [2, 'A'],
      [3, 'B'],
      [7, 'D']
    ]);
    expect(keyOfLine(['id-1', '#4'], 7, colorsOf)).toBe('#4');
    expect(keyOfLine(['id-1', '#4'], 3, colorsOf)).toBe('id-1');
    expect(keyOfLine(['id-1', '#4'], 9, colorsOf)).toBeNull();
  });

  it('selects only its own lines', () => {
    const sel = { cell: '#4', lines: [3], origin: 'jaxpr', reveal: true };
    expect(selectedLines(['id-1', '#4'], sel)).toEqual([3]);
    expect(selectedLines(['id-2', '#5'], sel)).toEqual([]);
    expect(selectedLines(['id-2'], null)).toEqual([]);
  });

  it('paints coloured and selected lines inside the document', () => {
    const marks = lineMarks(
      new Map([
        [2, 'A'],
        [9, 'Z']
      ]),
      [5, 2],
      6
    );
    expect(marks).toEqual([
      { line: 2, color: 'A', selected: true },
      { line: 5, color: null, selected: true }
    ]);
    expect(marksKey(new Map([[2, 'A']]), [1])).not.toBe(
      marksKey(new Map([[2, 'A']]), [])
    );
    expect(
      marksKey(
        new Map([
          [2, 'A'],
          [1, 'B']
        ]),
        []
      )
    ).toBe(
      marksKey(
        new Map([
          [1, 'B'],
          [2, 'A']
        ]),
        []
      )
    );
  });
});
