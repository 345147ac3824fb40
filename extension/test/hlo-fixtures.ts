/**
 * Shared setup of the HLO view tests that draw in jsdom: the recorded `%%hlo` bundle of a
 * while loop (tests/extension's fixture), and the stand-ins for what jsdom lacks (a canvas
 * context, element sizes, animation frames).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HLO_MIME = 'application/vnd.jax-workbench.hlo+json';

/** the recorded display bundle of a program with a while loop and a cond (fresh per call) */
export function whileBundle(): Record<string, unknown> {
  return JSON.parse(
    readFileSync(
      // a path, not a URL: under jsdom, import.meta.url is no file URL
      join(
        dirname(fileURLToPath(import.meta.url)),
        'fixtures',
        'hlo-while-bundle.json'
      ),
      'utf8'
    )
  ) as Record<string, unknown>;
}

/** a canvas context that accepts every call and draws nothing (text measures 10 px) */
export function noopContext(): CanvasRenderingContext2D {
  return new Proxy(
    {},
    {
      get: (_t, prop) =>
        prop === 'measureText' ? () => ({ width: 10 }) : () => undefined,
      set: () => true
    }
  ) as CanvasRenderingContext2D;
}

/** every canvas draws into `ctx`, and every element is `width` x `height` px (jsdom lays out nothing) */
export function stubCanvas(
  ctx: object = noopContext(),
  width = 600,
  height = 400
): void {
  HTMLCanvasElement.prototype.getContext = (() =>
    ctx) as unknown as HTMLCanvasElement['getContext'];
  Object.defineProperty(HTMLElement.prototype, 'clientWidth', {
    configurable: true,
    get: () => width
  });
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', {
    configurable: true,
    get: () => height
  });
}

/** the canvas stub, and animation frames as timeouts where jsdom has none */
export function stubDrawing(): void {
  stubCanvas();
  if (!globalThis.requestAnimationFrame) {
    globalThis.requestAnimationFrame = ((cb: FrameRequestCallback) =>
      setTimeout(
        () => cb(performance.now()),
        0
      )) as typeof requestAnimationFrame;
    globalThis.cancelAnimationFrame = ((id: number) =>
      clearTimeout(id)) as typeof cancelAnimationFrame;
  }
}
