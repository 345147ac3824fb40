/**
 * The app plugin: links outputs to their cells' editors (the renderers themselves are the
 * MIME extension in `mime.ts`).  Optional on the notebook tracker: where there are no
 * notebooks (a console), outputs still render, only without editor links.
 */

import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import { connectEditors } from './linking/editors';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jax-workbench:linking',
  description: 'Colours the source lines of a cell that produced jaxpr equations and HLO nodes, and links them both ways.',
  autoStart: true,
  optional: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker | null) => {
    if (tracker) connectEditors(tracker);
  }
};

export default plugin;
