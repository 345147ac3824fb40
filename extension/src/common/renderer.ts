/**
 * The one renderer class for every `application/vnd.jax-workbench.*+json` type.
 *
 * It never uses kernel HTML: it reads the JSON payload (unpacking it if packed) and hands
 * it to the feature's view, so trusted and untrusted notebooks render the same.  A payload
 * it cannot draw (a newer version than its schemas, a bug) shows a one-line note and the
 * output's `text/plain`, never a broken output.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import type { CellMap } from './cells';
import { keepKeysInside } from './keys';
import { kindOf, unpack, versionProblem, type Payload } from './payload';
import type {
  FeatureView,
  FeatureViewFactory,
  RenderContext
} from './featureView';

let _outputs = 0;

export class WorkbenchRenderer extends Widget implements IRenderMime.IRenderer {
  private _view: FeatureView | null = null;
  private readonly _kind: string;

  constructor(
    private readonly _mimeType: string,
    private readonly _factory: FeatureViewFactory
  ) {
    super();
    this._kind = kindOf(_mimeType) ?? 'unknown';
    this.addClass('jwb-ext');
    this.addClass(`jwb-ext-${this._kind}`);
    // keys typed into the output's controls never reach the notebook's shortcuts
    keepKeysInside(this.node);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const outputId = `jwb-${++_outputs}`;
    const kind = this._kind;
    performance.mark(`jwb:${kind}:received`, { detail: { outputId } });
    const raw = model.data[this._mimeType] as unknown as Payload | undefined;
    try {
      if (!raw || typeof raw !== 'object') {
        throw new Error('no payload');
      }
      const problem = versionProblem(kind, raw);
      if (problem !== null) {
        // a display update may replace a drawn output: its view lets go of what it holds
        this._view?.dispose?.();
        this._view = null;
        this._showNote(problem, model);
        return;
      }
      const payload = await unpack(raw);
      if (!this._view) {
        this._view = this._factory();
      }
      this.node.removeAttribute('data-jwb-ready');
      let done = false;
      const ctx: RenderContext = {
        mimeType: this._mimeType,
        bundle: model.data as Record<string, unknown>,
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
      this._showError(err, model);
    }
  }

  private _showError(err: unknown, model: IRenderMime.IMimeModel): void {
    this._showNote(
      `jax-workbench could not draw this ${this._kind} output: ${
        err instanceof Error ? err.message : String(err)
      }`,
      model
    );
  }

  /** One line saying why the output is not drawn, then the kernel's `text/plain`. */
  private _showNote(message: string, model: IRenderMime.IMimeModel): void {
    this.node.textContent = '';
    const note = document.createElement('div');
    note.className = 'jwb-ext-error';
    note.textContent = message;
    this.node.appendChild(note);
    const text = model.data['text/plain'];
    if (typeof text === 'string') {
      const pre = document.createElement('pre');
      pre.textContent = text;
      this.node.appendChild(pre);
    }
    this.node.setAttribute('data-jwb-ready', 'error');
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._view?.dispose?.();
    this._view = null;
    super.dispose();
  }
}
