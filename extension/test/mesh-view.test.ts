// @vitest-environment jsdom
/** The mesh explorer view in a DOM (jsdom): hovering a collective outlines its device groups. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { Payload } from '../src/common/payload';
import { meshExplorerView } from '../src/mesh/view';

const read = (name: string): Payload =>
  JSON.parse(
    readFileSync(join(__dirname, 'fixtures', `${name}.json`), 'utf8')
  ) as Payload;

afterEach(() => {
  vi.restoreAllMocks();
  document.body.textContent = '';
});

describe('mesh explorer view: collectives outline their groups in the mesh grids', () => {
  it('a collective-permute outlines each ring of its pairs in one colour', async () => {
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockReturnValue(null);
    const p = read('mesh-allreduce') as Payload & {
      collectives: Record<string, unknown>[];
    };
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
    const permute = {
      ...p.collectives[0],
      kind: 'collective-permute',
      description: 'collective-permute',
      groups: null,
      pairs: ring
    };
    const host = document.body.appendChild(document.createElement('div'));
    const view = meshExplorerView();
    await view.render(
      host,
      { ...p, collectives: [permute] },
      {
        mimeType: 'x',
        bundle: {},
        cells: {},
        outputId: 'o',
        interactive: () => undefined
      }
    );
    const row = host.querySelector('.jwb-mx-coll tbody tr')!;
    row.dispatchEvent(new MouseEvent('mouseenter'));
    const grid = host.querySelector('.jwb-sh-mesh-grid')!;
    const group = (d: number): string | undefined =>
      (grid.querySelector(`td[data-device="${d}"]`) as HTMLElement).dataset
        .group;
    expect([0, 1, 2, 3].map(group)).toEqual(['0', '0', '0', '0']);
    expect([4, 5, 6, 7].map(group)).toEqual(['1', '1', '1', '1']);
    row.dispatchEvent(new MouseEvent('mouseleave'));
    expect(group(0)).toBeUndefined();
    view.dispose?.();
  });
});
