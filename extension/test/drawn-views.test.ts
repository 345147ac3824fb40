// @vitest-environment jsdom
/**
 * The views built with `drawnView` (memory, memory-program, cache-cell, cache-persistent;
 * cluster, profile and compile-time likewise) on real payloads from make_fixtures.py: each
 * render replaces the host's content with one root and marks the output interactive once,
 * and `headedTable` puts the header in a `<thead>` and one body row per item in `<tbody>`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

import type { Payload } from '../src/common/payload';
import { VIEWS } from '../src/common/viewRegistry';
import type { MemoryProgramPayload } from '../src/memory/model';

const read = (name: string): Payload =>
  JSON.parse(
    readFileSync(join(__dirname, 'fixtures', `${name}.json`), 'utf8')
  ) as Payload;

/** render `kind`'s view of fixture `name` twice into one host; how often it said ready */
function renderTwice(kind: string, name: string): [HTMLElement, number] {
  const interactive = vi.fn();
  const ctx = {
    mimeType: 'x',
    bundle: {},
    cells: {},
    outputId: 'o',
    interactive
  };
  const host = document.createElement('div');
  const view = VIEWS[kind as keyof typeof VIEWS]();
  const p = read(name);
  void view.render(host, p, ctx);
  void view.render(host, p, ctx);
  return [host, interactive.mock.calls.length];
}

describe('views drawn once from their payload', () => {
  it.each([
    ['memory', 'memory-live', 'jwb-mem'],
    ['memory-program', 'memory-program', 'jwb-mem'],
    ['cache-cell', 'cache-cell-recompile', 'jwb-cache-cell'],
    ['cache-persistent', 'cache-persistent-on', 'jwb-cache-persistent']
  ])(
    '%s: each render replaces the host with one root, ready once',
    (kind, name, root) => {
      const [host, ready] = renderTwice(kind, name);
      expect(ready).toBe(2);
      expect(host.children).toHaveLength(1);
      expect(host.children[0].className).toBe(root);
    }
  );

  it('memory-program: the buffers at the peak under a header row', () => {
    const p = read('memory-program') as unknown as MemoryProgramPayload;
    const [host] = renderTwice('memory-program', 'memory-program');
    const table = host.querySelector('table.jwb-mem-buffers');
    const head = [...(table?.querySelectorAll('thead th') ?? [])];
    expect(head.map(th => th.textContent)).toEqual([
      'bytes',
      'shape',
      'instruction',
      'line'
    ]);
    expect(table?.querySelectorAll('tbody tr')).toHaveLength(p.buffers.length);
  });
});
