// scaffold: replaced by the cells work (issue 13)
import type { JupyterFrontEndPlugin } from '@jupyterlab/application';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jax-workbench:cells',
  description: 'Per-cell compile badges and live diffs of re-run %%jaxpr / %%hlo cells.',
  autoStart: true,
  activate: () => undefined
};

export default plugin;
