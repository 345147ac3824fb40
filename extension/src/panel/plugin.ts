/**
 * The panel plugin: one `WorkbenchLink` per open notebook (made when the notebook opens, so
 * a later `%load_ext workbench` finds the comm target registered and badges are written
 * even while the panel is closed), the "JAX Workbench" sidebar in the right area (JupyterLab 4
 * and Notebook 7's notebook page), following the active notebook, and `IWorkbenchLinks` for
 * the per-cell badges and live diffs.
 */

import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';
import { Signal, type ISignal } from '@lumino/signaling';

import { showCell } from './cellnav';
import { WorkbenchLink } from './link';
import { PANEL_ID, WorkbenchSidebar } from './sidebar';
import { IWorkbenchLinks, type IWorkbenchLink } from './tokens';

export const LIVE_MODE_KEY = 'jax-workbench:live-mode';
export const OPEN_PANEL_COMMAND = 'jax-workbench:open-panel';

function readLiveMode(): boolean {
  try {
    return globalThis.localStorage?.getItem(LIVE_MODE_KEY) === 'true';
  } catch {
    return false;
  }
}

/** The links of open notebooks and the live-mode toggle. */
export class WorkbenchLinks implements IWorkbenchLinks {
  private readonly _links = new Map<NotebookPanel, WorkbenchLink>();
  private readonly _liveModeChanged = new Signal<IWorkbenchLinks, boolean>(this);
  private _liveMode = readLiveMode();
  /** set by the plugin: shows the sidebar filtered to a cell */
  onOpenPanel: (cellId: string | null) => void = () => undefined;

  linkFor(notebook: NotebookPanel): WorkbenchLink {
    let link = this._links.get(notebook);
    if (!link || link.isDisposed) {
      link = new WorkbenchLink(notebook);
      this._links.set(notebook, link);
      notebook.disposed.connect(() => this._links.delete(notebook));
    }
    return link;
  }

  openPanel(cellId: string | null): void {
    this.onOpenPanel(cellId);
  }

  get liveMode(): boolean {
    return this._liveMode;
  }

  set liveMode(on: boolean) {
    if (on === this._liveMode) return;
    this._liveMode = on;
    try {
      globalThis.localStorage?.setItem(LIVE_MODE_KEY, String(on));
    } catch {
      // private mode: the toggle holds for this page only
    }
    this._liveModeChanged.emit(on);
  }

  get liveModeChanged(): ISignal<IWorkbenchLinks, boolean> {
    return this._liveModeChanged;
  }

  /** every live link (tests, the sidebar) */
  links(): IWorkbenchLink[] {
    return [...this._links.values()];
  }
}

const plugin: JupyterFrontEndPlugin<IWorkbenchLinks> = {
  id: 'jax-workbench:panel',
  description: 'The JAX Workbench side panel: devices, memory, the compile ledger, timings.',
  autoStart: true,
  provides: IWorkbenchLinks,
  optional: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker | null): IWorkbenchLinks => {
    const links = new WorkbenchLinks();
    const sidebar = new WorkbenchSidebar({
      showCell: async (link, cellId) => {
        const found = await showCell(link.notebook, cellId);
        if (found) app.shell.activateById(link.notebook.id);
        return found;
      },
      liveMode: () => links.liveMode,
      setLiveMode: on => {
        links.liveMode = on;
      }
    });
    links.liveModeChanged.connect((_, on) => sidebar.setLiveMode(on));
    app.shell.add(sidebar, 'right', { rank: 650 });

    const follow = (): void => {
      const nb = tracker?.currentWidget ?? null;
      sidebar.setLink(nb && !nb.isDisposed ? links.linkFor(nb) : null);
    };
    links.onOpenPanel = cellId => {
      follow();
      sidebar.filterCell(cellId);
      app.shell.activateById(PANEL_ID);
    };
    app.commands.addCommand(OPEN_PANEL_COMMAND, {
      label: 'Show the JAX Workbench panel',
      execute: args => links.openPanel(typeof args?.cellId === 'string' ? args.cellId : null)
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
