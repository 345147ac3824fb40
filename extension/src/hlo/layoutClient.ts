/**
 * Runs layouts in the Blob-URL worker (the bundled layout.worker.ts source it is given: see
 * view.ts), one at a time per view;
 * a superseded request's answer is dropped.  Each layout is recorded as
 * `performance.measure('jwb:hlo:layout')` from posting to receiving.
 *
 * Small graphs (up to SYNC_LIMIT boxes: what the clustered first screen of even a big model
 * is) are laid out on the main thread right away: that takes a few milliseconds, while a
 * worker's answer waits for the main thread to be free, and right after a big output
 * arrives JupyterLab keeps it busy for a second or more (its table of contents sanitises
 * the output's HTML).  Where no worker can be started, the same code runs on the main thread.
 */

import {
  layeredLayout,
  type LayoutInput,
  type LayoutOptions,
  type LayoutResult
} from './layout';

/** up to this many boxes are laid out synchronously on the main thread */
export const SYNC_LIMIT = 400;

interface Answer {
  seq: number;
  result?: LayoutResult;
  error?: string;
  ms?: number;
}

export class LayoutClient {
  private _worker: Worker | null = null;
  private _url: string | null = null;
  private _seq = 0;
  /** the worker failed to load or run (e.g. a CSP without blob: workers): main thread from now on */
  private _broken = false;
  private readonly _pending = new Map<
    number,
    {
      resolve(r: LayoutResult | null): void;
      reject(e: Error): void;
      start: number;
      input: LayoutInput;
      options?: LayoutOptions;
    }
  >();
  /** duration of the last layout (post to answer), ms */
  lastMs = 0;

  constructor(private readonly _source: string) {}

  private _start(): Worker | null {
    if (this._worker) {
      return this._worker;
    }
    if (
      this._broken ||
      !this._source ||
      typeof Worker === 'undefined' ||
      typeof Blob === 'undefined'
    ) {
      return null;
    }
    try {
      this._url = URL.createObjectURL(
        new Blob([this._source], { type: 'text/javascript' })
      );
      const w = new Worker(this._url);
      w.onmessage = (ev: MessageEvent<Answer>) => this._answer(ev.data);
      w.onerror = ev => {
        // the worker could not load or crashed: lay its requests out here instead
        ev.preventDefault?.();
        this._broken = true;
        w.terminate();
        this._worker = null;
        for (const [seq, p] of this._pending) {
          this._onMain(seq, p.input, p.options);
        }
      };
      this._worker = w;
    } catch {
      this._worker = null;
    }
    return this._worker;
  }

  private _answer(a: Answer): void {
    const p = this._pending.get(a.seq);
    if (!p) {
      return;
    }
    this._pending.delete(a.seq);
    const end = performance.now();
    this.lastMs = end - p.start;
    try {
      performance.measure('jwb:hlo:layout', {
        start: p.start,
        end,
        detail: { where: this._worker ? 'worker' : 'main', workerMs: a.ms }
      });
    } catch {
      // older engines: the timing is still in lastMs
    }
    if (a.error) {
      p.reject(new Error(a.error));
    } else {
      p.resolve(a.seq === this._seq ? (a.result as LayoutResult) : null);
    }
  }

  /** The layout, or null when a newer request replaced this one. */
  layout(
    input: LayoutInput,
    options?: LayoutOptions
  ): Promise<LayoutResult | null> {
    const seq = ++this._seq;
    const start = performance.now();
    if (input.widths.length <= SYNC_LIMIT) {
      const result = layeredLayout(input, options);
      const end = performance.now();
      this.lastMs = end - start;
      try {
        performance.measure('jwb:hlo:layout', {
          start,
          end,
          detail: { where: 'main', boxes: input.widths.length }
        });
      } catch {
        // older engines
      }
      return Promise.resolve(result);
    }
    const w = this._start();
    return new Promise((resolve, reject) => {
      this._pending.set(seq, { resolve, reject, start, input, options });
      if (w) {
        w.postMessage({ seq, input, options });
      } else {
        this._onMain(seq, input, options);
      }
    });
  }

  /** lay out on the main thread, after the current task */
  private _onMain(
    seq: number,
    input: LayoutInput,
    options?: LayoutOptions
  ): void {
    setTimeout(() => {
      if (!this._pending.has(seq)) {
        return;
      }
      try {
        this._answer({ seq, result: layeredLayout(input, options) });
      } catch (err) {
        this._answer({
          seq,
          error: err instanceof Error ? err.message : String(err)
        });
      }
    }, 0);
  }

  dispose(): void {
    this._worker?.terminate();
    this._worker = null;
    if (this._url) {
      URL.revokeObjectURL(this._url);
    }
    this._url = null;
    for (const [, p] of this._pending) {
      p.resolve(null);
    }
    this._pending.clear();
  }
}
