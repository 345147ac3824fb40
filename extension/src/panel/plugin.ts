// scaffold: replaced by the panel work (issue 13)
import type { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { IWorkbenchLinks } from './tokens';

const plugin: JupyterFrontEndPlugin<IWorkbenchLinks> = {
  id: 'jax-workbench:panel',
  description: 'The JAX Workbench side panel: devices, memory, the compile ledger, timings.',
  autoStart: true,
  provides: IWorkbenchLinks,
  activate: () => {
    throw new Error('scaffold');
  }
};

export default plugin;
