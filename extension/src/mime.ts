/**
 * The MIME-renderer extension: one renderer for every `application/vnd.jax-workbench.*+json`
 * type.  Rank 40 puts it ahead of JupyterLab's `text/html` renderer (rank 50), which stays
 * the fallback where the extension is not installed (nbconvert, VS Code, GitHub).  `safe`:
 * it draws data, never kernel HTML, so untrusted notebooks render the same as trusted ones.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { WorkbenchRenderer } from './common/renderer';
import { KINDS, kindOf, mimeType, type Kind } from './common/payload';
import { VIEWS } from './common/viewRegistry';

export const RANK = 40;

const extension: IRenderMime.IExtension = {
  id: 'jax-workbench:renderers',
  rendererFactory: {
    safe: true,
    mimeTypes: KINDS.map(mimeType),
    defaultRank: RANK,
    createRenderer: (options: IRenderMime.IRendererOptions) =>
      new WorkbenchRenderer(
        options.mimeType,
        VIEWS[kindOf(options.mimeType) as Kind]
      )
  },
  rank: RANK,
  dataType: 'json'
};

export default extension;
