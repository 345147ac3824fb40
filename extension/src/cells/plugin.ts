/**
 * Per-cell compile badges and live diffs (issue 13, items 2 and 3).
 *
 * Under every code cell that traced, lowered or compiled, a badge says what its last run
 * cost ("3 compiles · 1.2 s · 1 miss: <reason> · 2 persistent hits"); clicking it opens the
 * JAX Workbench side panel filtered to that cell.  With the side panel's live mode on, a re-run
 * `%%jaxpr` / `%%hlo` cell shows what changed since its previous run beside its output.
 *
 * The data come from the side panel plugin's per-notebook link (`IWorkbenchLinks`): badges also
 * from the cell metadata the link writes (so they survive windowing and reloads).  How the
 * strips follow JupyterLab's windowed notebooks is in `decorations.ts`.
 */

import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';

import { IWorkbenchLinks, type IWorkbenchLink } from '../sidepanel/tokens';
import { NotebookStrips, type NotebookLike } from './decorations';

/** Follow every notebook of `tracker` (present and future); returns the strips per panel. */
export function connectCells(
  links: IWorkbenchLinks,
  tracker: INotebookTracker
): Map<NotebookPanel, NotebookStrips> {
  const all = new Map<NotebookPanel, NotebookStrips>();
  const track = (panel: NotebookPanel): void => {
    if (all.has(panel) || panel.isDisposed) {
      return;
    }
    let link: IWorkbenchLink | null = null;
    try {
      link = links.linkFor(panel);
    } catch (err) {
      console.warn(
        'jax-workbench: no kernel link for this notebook; badges from saved metadata only',
        err
      );
    }
    const strips = new NotebookStrips(
      panel.content as unknown as NotebookLike,
      {
        badge: id => link?.badge(id) ?? null,
        diff: id => link?.diff(id) ?? null,
        liveMode: () => links.liveMode,
        openPanel: id => links.openPanel(id)
      }
    );
    all.set(panel, strips);
    const onChanged = (): void => strips.scheduleRefresh();
    link?.changed.connect(onChanged);
    // a notebook opened from disk: its cells exist once the context is ready
    void panel.context.ready.then(
      () => strips.scan(),
      () => undefined
    );
    panel.disposed.connect(() => {
      link?.changed.disconnect(onChanged);
      strips.dispose();
      all.delete(panel);
    });
  };
  tracker.forEach(track);
  tracker.widgetAdded.connect((_, panel) => track(panel));
  links.liveModeChanged.connect(() => {
    for (const strips of all.values()) {
      strips.refreshAll();
    }
  });
  return all;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jax-workbench:cells',
  description:
    'Per-cell compile badges and live diffs of re-run %%jaxpr / %%hlo cells.',
  autoStart: true,
  requires: [IWorkbenchLinks, INotebookTracker],
  activate: (
    _app: JupyterFrontEnd,
    links: IWorkbenchLinks,
    tracker: INotebookTracker
  ) => {
    connectCells(links, tracker);
  }
};

export default plugin;
