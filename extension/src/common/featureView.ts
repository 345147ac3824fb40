/**
 * What one feature's renderer is: given the host element and the unpacked payload, draw.
 *
 * Features (hlo/, jaxpr/, sharding/, bench/, cache/, mesh/) each export a `FeatureView`
 * factory; `common/renderer.ts` does everything they share (unpacking, errors, timing marks,
 * disposal), so a feature holds only its own drawing.
 */

import type { CellMap } from './cells';
import { el } from './dom';
import type { Payload } from './payload';

export interface RenderContext {
  /** the MIME type being rendered */
  mimeType: string;
  /** the whole output bundle (e.g. `text/plain` holds the HLO text JAX printed) */
  bundle: Record<string, unknown>;
  /** the payload's `cells` (file -> cell), {} when it has none */
  cells: CellMap;
  /** a fresh id for this output (DOM ids, performance-mark details) */
  outputId: string;
  /**
   * Call once the output can be used (drawn, scrollable, clickable): records the
   * `jwb:<kind>:interactive` performance mark and sets `data-jwb-ready` on the host.
   */
  interactive(): void;
}

export interface FeatureView {
  /** Draw `payload` into `host` (called again with a new payload on display updates). */
  render(
    host: HTMLElement,
    payload: Payload,
    ctx: RenderContext
  ): void | Promise<void>;
  /** Release workers, listeners and observers. */
  dispose?(): void;
}

export type FeatureViewFactory = () => FeatureView;

/**
 * The factory of a view that keeps nothing between renders: each render draws the payload
 * (read as `P`, the type its schema generates) into a fresh `<div class=rootClass>`, which
 * then replaces the host's content, and marks the output interactive.  Drawn detached, the
 * page lays it out once.
 */
export function drawnView<P>(
  rootClass: string,
  draw: (root: HTMLElement, payload: P, ctx: RenderContext) => void
): FeatureViewFactory {
  return () => ({
    render(host, payload, ctx) {
      const root = el('div', rootClass);
      draw(root, payload as unknown as P, ctx);
      host.replaceChildren(root);
      ctx.interactive();
    }
  });
}
