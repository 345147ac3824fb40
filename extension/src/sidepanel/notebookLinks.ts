/**
 * `IWorkbenchLinks`: one `WorkbenchLink` per open notebook (made on first ask, forgotten
 * when the notebook closes) and the panel's live-mode toggle, kept in localStorage so it
 * holds across reloads (the cells' live diffs read it).
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import { Signal, type ISignal } from '@lumino/signaling';

import type { Kernel } from '@jupyterlab/services';

import { WorkbenchLink, type LinkPeers } from './kernelLink';
import type { IWorkbenchLink, IWorkbenchLinks } from './tokens';

export const LIVE_MODE_KEY = 'jax-workbench:live-mode';

function readLiveMode(): boolean {
  try {
    return globalThis.localStorage?.getItem(LIVE_MODE_KEY) === 'true';
  } catch {
    return false;
  }
}

/** The links of open notebooks and the live-mode toggle. */
export interface WorkbenchLinksOptions {
  /** a new connection to a kernel, the way JupyterLab makes them (the plugin gives
   * `serviceManager.kernels.connectTo`): comms go to it only if no other connection has them */
  connect?: (
    kernel: Kernel.IKernelConnection
  ) => Kernel.IKernelConnection | null;
}

export class WorkbenchLinks implements IWorkbenchLinks {
  private readonly _links = new Map<NotebookPanel, WorkbenchLink>();
  private readonly _liveModeChanged = new Signal<IWorkbenchLinks, boolean>(
    this
  );
  private _liveMode = readLiveMode();
  /** set by the plugin: shows the sidebar filtered to a cell */
  onOpenPanel: (cellId: string | null) => void = () => undefined;
  private readonly _peers: LinkPeers;

  constructor(options: WorkbenchLinksOptions = {}) {
    this._peers = {
      leaderFor: (link, kernelId) => {
        for (const other of this._links.values()) {
          if (
            other !== link &&
            other.leads &&
            other.commKernelId === kernelId
          ) {
            return other;
          }
        }
        return null;
      },
      connect: kernel => options.connect?.(kernel) ?? null
    };
  }

  linkFor(notebook: NotebookPanel): WorkbenchLink {
    let link = this._links.get(notebook);
    if (!link || link.isDisposed) {
      link = new WorkbenchLink(notebook, this._peers);
      this._links.set(notebook, link);
      notebook.disposed.connect(() => {
        this._links.delete(notebook);
        this._relink();
      });
      this._relink();
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
    if (on === this._liveMode) {
      return;
    }
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

  /** A link came or went: followers without a live leader look again. */
  private _relink(): void {
    for (const link of [...this._links.values()]) {
      link.relink();
    }
  }

  /** The page is going away (reload, tab closed): close every comm now.  A closing page
   * sends no `comm_close` by itself, so the kernel would keep pushing every update to a comm
   * nobody reads, one more per reload. */
  closeAll(): void {
    for (const link of [...this._links.values()]) {
      link.dispose();
    }
    this._links.clear();
  }

  /** every live link (tests, the sidebar) */
  links(): IWorkbenchLink[] {
    return [...this._links.values()];
  }
}
