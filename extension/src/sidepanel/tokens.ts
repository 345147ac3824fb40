/**
 * What the panel plugin provides to the rest of the extension (the per-cell badges and
 * live diffs in `src/cells/`): one `IWorkbenchLink` per open notebook, following that
 * notebook's kernel through restarts and changes.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import type { ISignal } from '@lumino/signaling';
import { Token } from '@lumino/coreutils';

import type { CellBadge, KernelInfo, LiveDiff } from './protocol';

/** `connecting`: waiting for the kernel (starting, restarting, busy before hello);
 * `connected`: the workbench answered; `not-loaded`: the kernel has no workbench
 * (`%load_ext workbench` not run); `no-kernel`; `error`: a protocol mismatch, said in
 * `IWorkbenchLink.message`. */
export type LinkState =
  'no-kernel' | 'connecting' | 'connected' | 'not-loaded' | 'error';

export interface IWorkbenchLink {
  readonly notebook: NotebookPanel;
  readonly state: LinkState;
  /** a sentence for the user about the state (e.g. which protocol the kernel speaks) */
  readonly message: string;
  readonly kernel: KernelInfo | null;
  /** emits whenever anything the link holds changed (state, records, badges, diffs, memory) */
  readonly changed: ISignal<IWorkbenchLink, void>;
  /** the latest badge of a cell (by the notebook's cell id), if it traced/lowered/compiled */
  badge(cellId: string): CellBadge | null;
  /** the latest live diff of a `%%jaxpr` / `%%hlo` cell, if it was re-run */
  diff(cellId: string): LiveDiff | null;
  /** runs `%load_ext workbench` in the kernel (the "load workbench" button) */
  loadWorkbench(): Promise<void>;
}

export interface IWorkbenchLinks {
  /** the link of a notebook (made on first ask; disposed with the notebook) */
  linkFor(notebook: NotebookPanel): IWorkbenchLink;
  /** shows the side panel, its ledger filtered to one cell (null: no filter) */
  openPanel(cellId: string | null): void;
  /** the live-mode toggle of the panel (diffs are shown beside outputs only when on) */
  readonly liveMode: boolean;
  readonly liveModeChanged: ISignal<IWorkbenchLinks, boolean>;
}

export const IWorkbenchLinks = new Token<IWorkbenchLinks>(
  'jax-workbench:IWorkbenchLinks',
  'The kernel links of open notebooks: compile ledger, badges, live diffs and memory.'
);
