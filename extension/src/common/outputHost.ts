/**
 * Drawing one output into a DOM node, with no JupyterLab or Lumino in sight.
 *
 * The JupyterLab MIME renderer (common/renderer.ts, a Lumino widget) and the standalone
 * runtime (standalone.ts, carried in the output's `text/html` for VS Code, Colab and
 * exported HTML) both hand the output's MIME bundle to an `OutputHost`: it checks the
 * payload's version, unpacks it, asks the kind's view (common/viewRegistry.ts) to draw, and
 * records the `jwb:<kind>:received` / `jwb:<kind>:interactive` marks and `data-jwb-ready`.
 * A payload it cannot draw shows a one-line note and the output's `text/plain`.
 */

import type { CellMap } from './cells';
import { kindOf, unpack, versionProblem, type Payload } from './payload';
import type {
  FeatureView,
  FeatureViewFactory,
  RenderContext
} from './featureView';

let _outputs = 0;

export class OutputHost {
  private _view: FeatureView | null = null;
  readonly kind: string;

  constructor(
    readonly node: HTMLElement,
    private readonly _mimeType: string,
    private readonly _factory: FeatureViewFactory | undefined
  ) {
    this.kind = kindOf(_mimeType) ?? 'unknown';
  }

  /** Draw the output whose MIME bundle is `data` (again, on display updates). */
  async render(data: Record<string, unknown>): Promise<void> {
    const outputId = `jwb-${++_outputs}`;
    const kind = this.kind;
    performance.mark(`jwb:${kind}:received`, { detail: { outputId } });
    const raw = data[this._mimeType] as Payload | undefined;
    try {
      if (!raw || typeof raw !== 'object') {
        throw new Error('no payload');
      }
      const problem = versionProblem(kind, raw);
      if (problem !== null) {
        // a display update may replace a drawn output: its view lets go of what it holds
        this._view?.dispose?.();
        this._view = null;
        this._showNote(problem, data);
        return;
      }
      if (!this._factory) {
        throw new Error(`no view for the ${kind} kind`);
      }
      const payload = await unpack(raw);
      if (!this._view) {
        this._view = this._factory();
      }
      this.node.removeAttribute('data-jwb-ready');
      let done = false;
      const ctx: RenderContext = {
        mimeType: this._mimeType,
        bundle: data,
        cells: ((payload as { cells?: CellMap }).cells ?? {}) as CellMap,
        outputId,
        interactive: () => {
          if (done) {
            return;
          }
          done = true;
          performance.mark(`jwb:${kind}:interactive`, { detail: { outputId } });
          this.node.setAttribute('data-jwb-ready', '1');
        }
      };
      await this._view.render(this.node, payload, ctx);
    } catch (err) {
      this._showNote(
        `jax-workbench could not draw this ${kind} output: ${
          err instanceof Error ? err.message : String(err)
        }`,
        data
      );
    }
  }

  /** One line saying why the output is not drawn, then the kernel's `text/plain`. */
  private _showNote(message: string, data: Record<string, unknown>): void {
    this.node.textContent = '';
    const note = document.createElement('div');
    note.className = 'jwb-ext-error';
    note.textContent = message;
    this.node.appendChild(note);
    const text = data['text/plain'];
    if (typeof text === 'string') {
      const pre = document.createElement('pre');
      pre.textContent = text;
      this.node.appendChild(pre);
    }
    this.node.setAttribute('data-jwb-ready', 'error');
  }

  dispose(): void {
    this._view?.dispose?.();
    this._view = null;
  }
}
