/**
 * The one renderer class for every `application/vnd.jax-workbench.*+json` type.
 *
 * It never uses kernel HTML: it hands the output's MIME bundle to an `OutputHost`
 * (common/outputHost.ts: version check, unpacking, the kind's view, errors, timing marks),
 * the same code the standalone runtime in the `text/html` part uses, so trusted and
 * untrusted notebooks, and front ends without this extension, draw the same.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { keepKeysInside } from './keys';
import { kindOf } from './payload';
import { OutputHost } from './outputHost';
import type { FeatureViewFactory } from './featureView';

export class WorkbenchRenderer extends Widget implements IRenderMime.IRenderer {
  private readonly _host: OutputHost;

  constructor(mimeType: string, factory: FeatureViewFactory) {
    super();
    const kind = kindOf(mimeType) ?? 'unknown';
    this.addClass('jwb-ext');
    this.addClass(`jwb-ext-${kind}`);
    // keys typed into the output's controls never reach the notebook's shortcuts
    keepKeysInside(this.node);
    this._host = new OutputHost(this.node, mimeType, factory);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    await this._host.render(model.data as Record<string, unknown>);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._host.dispose();
    super.dispose();
  }
}
