import { afterEach, describe, expect, it } from 'vitest';

import { LayoutClient, SYNC_LIMIT } from '../src/hlo/layoutClient';
import type { LayoutInput } from '../src/hlo/layout';

function chain(n: number): LayoutInput {
  const src = Int32Array.from({ length: n - 1 }, (_, i) => i);
  const dst = Int32Array.from({ length: n - 1 }, (_, i) => i + 1);
  return {
    widths: new Float64Array(n).fill(100),
    heights: new Float64Array(n).fill(30),
    src,
    dst
  };
}

const realWorker = (globalThis as { Worker?: unknown }).Worker;
afterEach(() => {
  (globalThis as { Worker?: unknown }).Worker = realWorker;
});

describe('layout client', () => {
  it('lays out on the main thread when the worker cannot run (e.g. a CSP without blob: workers)', async () => {
    // a Worker that is created but fails when it loads, as a CSP-blocked blob: worker does
    class BlockedWorker {
      onmessage: ((ev: MessageEvent) => void) | null = null;
      onerror: ((ev: ErrorEvent) => void) | null = null;
      postMessage(): void {
        setTimeout(
          () =>
            this.onerror?.({
              message: 'Refused to create a worker from blob:'
            } as ErrorEvent),
          1
        );
      }
      terminate(): void {
        /* nothing runs */
      }
    }
    (globalThis as { Worker?: unknown }).Worker = BlockedWorker;
    const client = new LayoutClient('self.onmessage = () => {}');
    const n = SYNC_LIMIT + 100;
    const r = await client.layout(chain(n));
    expect(r?.x.length).toBe(n);
    // and the next one too, without waiting on the broken worker
    const r2 = await client.layout(chain(n + 1));
    expect(r2?.x.length).toBe(n + 1);
    client.dispose();
  });
});
