/// <reference lib="webworker" />
/**
 * The layout worker: receives typed arrays, answers with the layered layout (layout.ts),
 * so a 10,000-node graph is laid out off the main thread.  Bundled by
 * scripts/bundle-workers.mjs into src/generated/layout.worker-source.ts and started from a
 * Blob URL.
 */
import { layeredLayout, type LayoutInput, type LayoutOptions } from './layout';

interface Request {
  seq: number;
  input: LayoutInput;
  options?: LayoutOptions;
}

const scope = self as unknown as DedicatedWorkerGlobalScope;
scope.onmessage = (ev: MessageEvent<Request>) => {
  const { seq, input, options } = ev.data;
  try {
    const t0 = performance.now();
    const r = layeredLayout(input, options);
    const ms = performance.now() - t0;
    scope.postMessage({ seq, result: r, ms }, [
      r.x.buffer,
      r.y.buffer,
      r.layer.buffer,
      r.edgeOffsets.buffer,
      r.edgePoints.buffer
    ]);
  } catch (err) {
    scope.postMessage({
      seq,
      error: err instanceof Error ? err.message : String(err)
    });
  }
};
