/**
 * The app plugins: editor links for outputs (the renderers themselves are the MIME
 * extension in `mime.ts`), the "JAX Workbench" side panel with its per-notebook kernel
 * links (`panel/`), and the per-cell badges and live diffs (`cells/`).  Each is optional on
 * the notebook tracker: where there are no notebooks (a console), outputs still render.
 */

import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import cellsPlugin from './cells/plugin';
import { connectEditors } from './linking/editors';
import panelPlugin from './panel/plugin';

const linkingPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jax-workbench:linking',
  description:
    'Colours the source lines of a cell that produced jaxpr equations and HLO nodes, and links them both ways.',
  autoStart: true,
  optional: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker | null) => {
    if (tracker) {
      connectEditors(tracker);
    }
  }
};

export default [linkingPlugin, panelPlugin, cellsPlugin];
