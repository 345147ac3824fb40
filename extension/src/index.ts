/**
 * The app plugins: source-line linking between outputs and cell editors (`sourcelines/`; the
 * renderers themselves are the MIME extension in `mime.ts`), the "JAX Workbench" side panel
 * with its per-notebook kernel links (`sidepanel/`), and the per-cell badges and live diffs
 * (`cells/`).  Each is optional on
 * the notebook tracker: where there are no notebooks (a console), outputs still render.
 */

import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import cellsPlugin from './cells/plugin';
import { connectEditors } from './sourcelines/editors';
import sidePanelPlugin from './sidepanel/plugin';

const sourceLinesPlugin: JupyterFrontEndPlugin<void> = {
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

export default [sourceLinesPlugin, sidePanelPlugin, cellsPlugin];
