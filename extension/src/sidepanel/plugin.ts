/**
 * The side panel plugin: one `WorkbenchLink` per open notebook (made when the notebook opens, so
 * a later `%load_ext workbench` finds the comm target registered and badges are written
 * even while the panel is closed), the "JAX Workbench" sidebar in the right area (JupyterLab 4
 * and Notebook 7's notebook page), following the active notebook, and `IWorkbenchLinks` for
 * the per-cell badges and live diffs.
 */

import {
  ILabShell,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import { showCell } from './cellnav';
import { WorkbenchLinks } from './notebookLinks';
import { PANEL_ID, WorkbenchSidebar } from './sidebar';
import { IWorkbenchLinks } from './tokens';

export const OPEN_PANEL_COMMAND = 'jax-workbench:open-panel';

const plugin: JupyterFrontEndPlugin<IWorkbenchLinks> = {
  id: 'jax-workbench:panel',
  description:
    'The JAX Workbench side panel: devices, memory, the compile ledger, timings.',
  autoStart: true,
  provides: IWorkbenchLinks,
  optional: [INotebookTracker, ILabShell],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker | null,
    labShell: ILabShell | null
  ): IWorkbenchLinks => {
    // a second notebook on a kernel gets a connection without comms; if the notebook whose
    // connection had them closes, its link asks JupyterLab's kernel manager for a new one
    const links = new WorkbenchLinks({
      connect: kernel =>
        app.serviceManager.kernels.connectTo({
          model: { id: kernel.id, name: kernel.name }
        })
    });
    const makeSidebar = (): WorkbenchSidebar => {
      const w = new WorkbenchSidebar({
        showCell: async (link, cellId) => {
          const found = await showCell(link.notebook, cellId);
          if (found) {
            app.shell.activateById(link.notebook.id);
          }
          return found;
        },
        liveMode: () => links.liveMode,
        setLiveMode: on => {
          links.liveMode = on;
        }
      });
      // JupyterLab's sidebar tabs are icons (a label would be drawn vertically beside them);
      // Notebook 7 names its side panels by label (View > Right Sidebar, the panel header)
      if (!labShell) {
        w.title.label = 'JAX Workbench';
      }
      app.shell.add(w, 'right', { rank: 650 });
      return w;
    };
    let sidebar = makeSidebar();
    window.addEventListener('pagehide', () => links.closeAll());
    links.liveModeChanged.connect((_, on) => {
      if (!sidebar.isDisposed) {
        sidebar.setLiveMode(on);
      }
    });

    const follow = (): void => {
      if (sidebar.isDisposed) {
        return;
      }
      const nb = tracker?.currentWidget ?? null;
      sidebar.setLink(nb && !nb.isDisposed ? links.linkFor(nb) : null);
    };
    links.onOpenPanel = cellId => {
      if (sidebar.isDisposed) {
        sidebar = makeSidebar();
      } // closed by some other extension
      follow();
      sidebar.filterCell(cellId);
      app.shell.activateById(PANEL_ID);
    };
    app.commands.addCommand(OPEN_PANEL_COMMAND, {
      label: 'Show the JAX Workbench panel',
      execute: args =>
        links.openPanel(typeof args?.cellId === 'string' ? args.cellId : null)
    });
    if (tracker) {
      // every notebook gets its link at once: `%load_ext` in it must find the comm target
      tracker.widgetAdded.connect((_, nb) => {
        links.linkFor(nb);
      });
      tracker.forEach(nb => links.linkFor(nb));
      tracker.currentChanged.connect(follow);
      follow();
    }
    return links;
  }
};

export default plugin;
