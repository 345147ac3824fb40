// @vitest-environment jsdom
/**
 * The sharding and mesh-explorer views in a DOM (jsdom): what runs while nothing happens.
 * Cards are drawn once their output is in the document; until then nothing may keep polling
 * the page every frame, and a disposed or replaced output must stop whatever it scheduled.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { Payload } from '../src/common/payload';
import type { RenderContext } from '../src/common/featureView';
import { meshExplorerView } from '../src/mesh/view';
import { shardingView } from '../src/sharding/view';

const read = (name: string): Payload =>
  JSON.parse(
    readFileSync(join(__dirname, 'fixtures', `${name}.json`), 'utf8')
  ) as Payload;

function context(): RenderContext & { ready: number } {
  const ctx = {
    mimeType: 'x',
    bundle: {},
    cells: {},
    outputId: 'o',
    ready: 0,
    interactive: () => {
      ctx.ready++;
    }
  };
  return ctx;
}

let frames: FrameRequestCallback[] = [];
let requested = 0;

/** Run the frames queued so far (as the browser would on its next frame). */
function frame(): void {
  const now = frames;
  frames = [];
  for (const cb of now) {
    cb(0);
  }
}

beforeEach(() => {
  frames = [];
  requested = 0;
  vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => {
    requested++;
    frames.push(cb);
    return requested;
  });
  vi.stubGlobal('cancelAnimationFrame', () => undefined);
  // jsdom has no canvas: getContext returns null (the drawing is skipped, the bookkeeping is not)
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockReturnValue(null);
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  document.body.textContent = '';
});

const views = [
  ['sharding', shardingView, 'sharding-tree'],
  ['mesh-explorer', meshExplorerView, 'mesh-allreduce']
] as const;

describe.each(views)(
  '%s view: nothing keeps running for an output that is gone',
  (_kind, factory, fixture) => {
    it('draws once attached and marks the output interactive', async () => {
      const host = document.createElement('div');
      const ctx = context();
      const view = factory();
      await view.render(host, read(fixture), ctx);
      document.body.appendChild(host);
      for (let i = 0; i < 3 && !ctx.ready; i++) {
        frame();
        await Promise.resolve();
      }
      expect(ctx.ready).toBe(1);
      view.dispose?.();
    });

    it('a disposed output that was never attached stops asking for frames', async () => {
      const host = document.createElement('div');
      const view = factory();
      await view.render(host, read(fixture), context());
      view.dispose?.();
      for (let i = 0; i < 5; i++) {
        frame();
      }
      expect(frames).toHaveLength(0);
    });

    it('a display update before the output was attached leaves no frame loop behind', async () => {
      const host = document.createElement('div');
      const view = factory();
      const ctx = context();
      await view.render(host, read(fixture), context());
      await view.render(host, read(fixture), ctx); // the first root is now detached for good
      document.body.appendChild(host);
      for (let i = 0; i < 5; i++) {
        frame();
        await Promise.resolve();
      }
      expect(ctx.ready).toBe(1);
      expect(frames).toHaveLength(0);
      view.dispose?.();
    });
  }
);

describe('a detached sharding output waits for a ResizeObserver, not for frames', () => {
  it('asks for no frames while detached, draws when it gets a box, disconnects when disposed', async () => {
    const observers: {
      cb: ResizeObserverCallback;
      observed: Element[];
      connected: boolean;
    }[] = [];
    class FakeResizeObserver {
      private readonly rec: {
        cb: ResizeObserverCallback;
        observed: Element[];
        connected: boolean;
      };
      constructor(cb: ResizeObserverCallback) {
        this.rec = { cb, observed: [], connected: true };
        observers.push(this.rec);
      }
      observe(el: Element): void {
        this.rec.observed.push(el);
      }
      unobserve(): void {
        /* unused */
      }
      disconnect(): void {
        this.rec.connected = false;
      }
    }
    vi.stubGlobal('ResizeObserver', FakeResizeObserver);
    const host = document.createElement('div');
    const ctx = context();
    const view = shardingView();
    await view.render(host, read('sharding-tree'), ctx);
    expect(requested).toBe(0);
    expect(observers).toHaveLength(1);
    document.body.appendChild(host);
    const ro = observers[0];
    ro.cb([], ro as unknown as ResizeObserver);
    expect(ctx.ready).toBe(1);
    expect(ro.connected).toBe(false);
    // a second render before attaching, then dispose: its observer is let go
    const host2 = document.createElement('div');
    const view2 = shardingView();
    await view2.render(host2, read('sharding-tree'), context());
    view2.dispose?.();
    expect(observers[1].connected).toBe(false);
    expect(requested).toBe(0);
    view.dispose?.();
  });
});
