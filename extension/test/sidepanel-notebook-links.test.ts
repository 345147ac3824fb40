// @vitest-environment jsdom
// IWorkbenchLinks: one link per notebook, and the live-mode toggle kept in localStorage.
import { describe, expect, it } from 'vitest';

import { LIVE_MODE_KEY, WorkbenchLinks } from '../src/sidepanel/notebookLinks';
import { BADGE_METADATA_KEY } from '../src/sidepanel/kernelLink';
import {
  FakeKernel,
  FakePanel,
  KERNEL,
  badge,
  record,
  snapshot
} from './sidepanel-fixtures';

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

  it('closeAll (the page going away) closes every comm, so the kernel stops pushing to it', () => {
    const links = new WorkbenchLinks();
    const ka = new FakeKernel();
    const a = new FakePanel(ka) as any;
    links.linkFor(a);
    const comm = ka.comms[ka.comms.length - 1];
    comm.receive(snapshot());
    expect(comm.closed).toBe(false);
    links.closeAll();
    expect(comm.closed).toBe(true);
    expect(links.links()).toHaveLength(0);
  });

  it('an update carrying kernel info (JAX started after the snapshot) shows the devices', () => {
    const links = new WorkbenchLinks();
    const ka = new FakeKernel();
    const link = links.linkFor(new FakePanel(ka) as any);
    const comm = ka.comms[ka.comms.length - 1];
    const notStarted = {
      jax_version: '0.10.2',
      backend: '',
      process_index: 0,
      process_count: 1,
      devices: []
    };
    comm.receive(snapshot({ kernel: notStarted }));
    expect(link.kernel?.devices).toHaveLength(0);
    comm.receive({
      protocol: 1,
      type: 'update',
      kernel: KERNEL,
      records: [record(1)]
    });
    expect(link.kernel?.backend).toBe('cpu');
    expect(link.kernel?.devices).toHaveLength(KERNEL.devices.length);
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

describe('two notebooks on one kernel in one page', () => {
  // JupyterLab lets only the first connection to a kernel handle comms (`handleComms`):
  // the second notebook's connection can neither open a comm nor hear the kernel's
  it("the second notebook's link follows the first's comm, and its own cells get badges", () => {
    const links = new WorkbenchLinks();
    const ka = new FakeKernel('shared');
    const kb = new FakeKernel('shared', false);
    const a = new FakePanel(ka, ['a1', 'a2']);
    const b = new FakePanel(kb, ['b1']);
    const la = links.linkFor(a as any);
    const lb = links.linkFor(b as any);
    expect(kb.comms).toHaveLength(0);
    expect(lb.state).toBe('connecting');
    let bChanges = 0;
    lb.changed.connect(() => bChanges++);
    ka.lastComm!.receive(snapshot());
    expect(la.state).toBe('connected');
    expect(lb.state).toBe('connected');
    expect(bChanges).toBeGreaterThan(0);
    ka.lastComm!.receive({
      protocol: 1,
      type: 'update',
      records: [record(1, { cell_id: 'a1' })],
      cells: [badge('a1'), badge('b1')]
    });
    expect(lb.store.records.map(r => r.seq)).toEqual([0, 1]);
    expect(lb.badge('b1')?.cell_id).toBe('b1');
    expect(b.content.model.cells[0].getMetadata(BADGE_METADATA_KEY)).toEqual({
      badge: badge('b1')
    });
    expect(
      a.content.model.cells[1].getMetadata(BADGE_METADATA_KEY)
    ).toBeUndefined();
    // the kernel unloads: both say so
    ka.lastComm!.kernelClose();
    expect(lb.state).toBe('not-loaded');
    // a notebook closes: the other keeps its own state, no errors
    b.disposed.emit();
    expect(la.state).toBe('not-loaded');
  });

  it('a follower whose leader closes takes a comm-handling connection of its own', () => {
    const ka = new FakeKernel('shared');
    const kb = new FakeKernel('shared', false);
    const spare = new FakeKernel('shared');
    const links = new WorkbenchLinks({
      connect: k => (k.id === 'shared' ? (spare as any) : null)
    });
    const a = new FakePanel(ka);
    const b = new FakePanel(kb);
    links.linkFor(a as any);
    const lb = links.linkFor(b as any);
    ka.lastComm!.receive(snapshot());
    expect(lb.state).toBe('connected');
    a.disposed.emit();
    // b now speaks to the kernel over the spare connection
    expect(spare.comms).toHaveLength(1);
    expect(lb.state).toBe('connecting');
    spare.lastComm!.receive(snapshot());
    expect(lb.state).toBe('connected');
    lb.dispose();
    expect(spare.isDisposed).toBe(true);
  });
});
