// @vitest-environment jsdom
// IWorkbenchLinks: one link per notebook, and the live-mode toggle kept in localStorage.
import { describe, expect, it } from 'vitest';

import { LIVE_MODE_KEY, WorkbenchLinks } from '../src/panel/links';
import { FakeKernel, FakePanel } from './panel-fixtures';

describe('WorkbenchLinks', () => {
  it('gives one link per notebook, a fresh one after the notebook closed', () => {
    const links = new WorkbenchLinks();
    const a = new FakePanel(new FakeKernel()) as any;
    const b = new FakePanel(new FakeKernel()) as any;
    const la = links.linkFor(a);
    expect(links.linkFor(a)).toBe(la);
    expect(links.linkFor(b)).not.toBe(la);
    expect(links.links()).toHaveLength(2);
    a.disposed.emit();
    expect(la.isDisposed).toBe(true);
    expect(links.links()).toHaveLength(1);
  });

  it('keeps live mode in localStorage and signals changes', () => {
    localStorage.removeItem(LIVE_MODE_KEY);
    const links = new WorkbenchLinks();
    expect(links.liveMode).toBe(false);
    const seen: boolean[] = [];
    links.liveModeChanged.connect((_, on) => seen.push(on));
    links.liveMode = true;
    links.liveMode = true; // no change, no signal
    expect(seen).toEqual([true]);
    expect(localStorage.getItem(LIVE_MODE_KEY)).toBe('true');
    expect(new WorkbenchLinks().liveMode).toBe(true); // a reload reads it back
    links.liveMode = false;
    expect(new WorkbenchLinks().liveMode).toBe(false);
  });

  it('openPanel goes to whoever shows the panel', () => {
    const links = new WorkbenchLinks();
    const asked: Array<string | null> = [];
    links.onOpenPanel = id => asked.push(id);
    links.openPanel('cell-a');
    links.openPanel(null);
    expect(asked).toEqual(['cell-a', null]);
  });
});
