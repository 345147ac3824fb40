// The link's state machine against fake kernel/comm objects (what JupyterLab's services do).
import { describe, expect, it } from 'vitest';

import { BADGE_METADATA_KEY, WorkbenchLink } from '../src/sidepanel/kernelLink';
import { COMM_TARGET } from '../src/sidepanel/protocol';
import {
  FakeKernel,
  FakePanel,
  badge,
  record,
  snapshot
} from './sidepanel-fixtures';

function linkOf(panel: FakePanel): WorkbenchLink {
  return new WorkbenchLink(panel as any);
}

const HELLO = { protocol: 1, type: 'hello', client: 'panel' };
const LEAVE = { protocol: 1, type: 'leave' };

describe('WorkbenchLink', () => {
  it('says hello on an idle kernel, and is connected after the snapshot', () => {
    const k = new FakeKernel();
    const link = linkOf(new FakePanel(k));
    expect(k.targets.has(COMM_TARGET)).toBe(true);
    expect(k.comms).toHaveLength(1);
    expect(k.lastComm!.targetName).toBe(COMM_TARGET);
    expect(k.lastComm!.opened).toEqual(HELLO);
    expect(link.state).toBe('connecting');
    k.lastComm!.receive(snapshot());
    expect(link.state).toBe('connected');
    expect(link.kernel?.devices).toHaveLength(8);
    expect(link.store.records.map(r => r.seq)).toEqual([0]);
  });

  it('shows not-loaded when ipykernel closes the comm before a snapshot, and the button loads it', async () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    let changes = 0;
    link.changed.connect(() => changes++);
    k.lastComm!.kernelClose();
    expect(link.state).toBe('not-loaded');
    expect(changes).toBeGreaterThan(0);
    // idle again after the comm_open: no retry loop
    panel.sessionContext.setStatus('busy');
    panel.sessionContext.setStatus('idle');
    expect(k.comms).toHaveLength(1);
    await link.loadWorkbench();
    expect(k.executed).toEqual([
      { code: '%load_ext workbench', silent: true, store_history: false }
    ]);
    // a workbench already loaded announces nothing: the link asked again by itself
    expect(k.comms).toHaveLength(2);
    expect(k.lastComm!.opened).toEqual(HELLO);
    k.lastComm!.receive(snapshot());
    expect(link.state).toBe('connected');
  });

  it("answers the kernel's announce with hello, but only once the kernel is idle", () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    k.lastComm!.kernelClose();
    expect(link.state).toBe('not-loaded');
    panel.sessionContext.setStatus('busy'); // `%load_ext workbench` runs
    const announced = k.announce();
    expect(announced.sent).toEqual([]); // busy: nothing sent
    expect(link.state).toBe('connecting');
    panel.sessionContext.setStatus('idle');
    expect(announced.sent).toEqual([HELLO]);
    expect(k.comms).toHaveLength(1); // answered on the kernel's comm, no new one
    announced.receive(snapshot());
    expect(link.state).toBe('connected');
  });

  it('sends no hello while the kernel is busy; hello follows idle', () => {
    const k = new FakeKernel();
    k.status = 'busy';
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    expect(k.comms).toHaveLength(0);
    panel.sessionContext.setStatus('busy');
    expect(k.comms).toHaveLength(0);
    panel.sessionContext.setStatus('idle');
    expect(k.comms).toHaveLength(1);
    expect(link.state).toBe('connecting');
    // a sample request from the panel (not a click) waits for idle too
    k.lastComm!.receive(snapshot());
    k.status = 'busy';
    expect(link.requestSample()).toBe(false);
    expect(link.requestSample(true)).toBe(true); // a click may
  });

  it('clears everything on restart and reconnects when idle', () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    const first = k.lastComm!;
    first.receive(
      snapshot({ records: [record(0), record(1)], cells: [badge('cell-a')] })
    );
    expect(link.store.records).toHaveLength(2);
    expect(link.badge('cell-a')?.compiles).toBe(1);
    panel.sessionContext.setStatus('restarting');
    expect(link.state).toBe('connecting');
    expect(link.store.records).toHaveLength(0);
    expect(link.badge('cell-a')).toBeNull();
    expect(link.kernel).toBeNull();
    panel.sessionContext.setStatus('starting');
    expect(k.comms).toHaveLength(1);
    // a late message on the dead comm is ignored
    first.receive({ protocol: 1, type: 'update', records: [record(7)] });
    expect(link.store.records).toHaveLength(0);
    panel.sessionContext.setStatus('idle');
    expect(k.comms).toHaveLength(2);
    expect(k.lastComm!.opened).toEqual(HELLO);
    // the restarted kernel has no workbench: not-loaded with the button
    k.lastComm!.kernelClose();
    expect(link.state).toBe('not-loaded');
    expect(k.targets.has(COMM_TARGET)).toBe(true);
  });

  it('follows a kernel change: target moved, state cleared, hello to the new kernel', () => {
    const k1 = new FakeKernel();
    const panel = new FakePanel(k1);
    const link = linkOf(panel);
    k1.lastComm!.receive(snapshot());
    const k2 = new FakeKernel();
    k2.status = 'starting';
    panel.sessionContext.changeKernel(k2);
    expect(k1.targets.has(COMM_TARGET)).toBe(false);
    expect(k1.comms[0].sent).toEqual([LEAVE]); // the old kernel closes it
    expect(k1.comms[0].closed).toBe(false);
    expect(k2.targets.has(COMM_TARGET)).toBe(true);
    expect(link.state).toBe('connecting');
    expect(link.store.records).toHaveLength(0);
    panel.sessionContext.setStatus('idle');
    expect(k2.comms).toHaveLength(1);
    panel.sessionContext.changeKernel(null);
    expect(link.state).toBe('no-kernel');
  });

  it('writes each badge into its cell metadata, skipping cells not in the notebook', () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k, ['cell-a', 'cell-b']);
    const link = linkOf(panel);
    k.lastComm!.receive(
      snapshot({ cells: [badge('cell-a', 2), badge('elsewhere', 9)] })
    );
    const [a, b] = panel.content.model.cells;
    expect(a.getMetadata(BADGE_METADATA_KEY)).toEqual({
      badge: badge('cell-a', 2)
    });
    expect(b.getMetadata(BADGE_METADATA_KEY)).toBeUndefined();
    expect(link.badge('elsewhere')?.compiles).toBe(9); // kept in the link, just not written
    k.lastComm!.receive({
      protocol: 1,
      type: 'update',
      cells: [badge('cell-b', 3)]
    });
    expect(b.getMetadata(BADGE_METADATA_KEY)).toEqual({
      badge: badge('cell-b', 3)
    });
  });

  it('survives malformed messages; another protocol is an error state', () => {
    const k = new FakeKernel();
    const link = linkOf(new FakePanel(k));
    const comm = k.lastComm!;
    comm.receive(snapshot());
    for (const junk of [
      null,
      42,
      'x',
      [],
      { protocol: 1 },
      { protocol: 1, type: 'nope' },
      {
        protocol: 1,
        type: 'update',
        records: 'x',
        cells: [null, 1],
        memory: [{}]
      },
      {
        protocol: 1,
        type: 'update',
        records: [{ function: 5 }, record(3, { reasons: 'no' })],
        extra: { a: 1 }
      }
    ]) {
      expect(() => comm.receive(junk)).not.toThrow();
    }
    expect(link.state).toBe('connected');
    expect(link.store.records.map(r => r.seq)).toEqual([0, 3]);
    expect(link.store.rejected).toBeGreaterThan(0);
    comm.receive({ protocol: 2, type: 'snapshot' });
    expect(link.state).toBe('error');
    expect(link.message).toContain('protocol 2');
  });

  it('the comm closing after a snapshot (%unload_ext) says unloaded; dispose cleans up', () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    k.lastComm!.receive(snapshot());
    k.lastComm!.receive({ protocol: 1, type: 'bye' });
    k.lastComm!.kernelClose();
    expect(link.state).toBe('not-loaded');
    expect(link.message).toContain('unloaded');
    const again = k.announce();
    k.status = 'idle';
    panel.sessionContext.setStatus('idle');
    expect(again.sent).toEqual([HELLO]);
    panel.disposed.emit();
    expect(link.isDisposed).toBe(true);
    expect(again.sent).toEqual([HELLO, LEAVE]);
    expect(again.closed).toBe(false);
    expect(k.targets.has(COMM_TARGET)).toBe(false);
  });
});

describe('WorkbenchLink leaving a comm the kernel may still write to', () => {
  it('sends leave and never closes the comm; what arrives before the kernel closes it is ignored', () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    const comm = k.lastComm!;
    comm.receive(snapshot());
    expect(link.state).toBe('connected');
    let closes = 0;
    const close = comm.close.bind(comm);
    comm.close = () => {
      closes++;
      close();
    };
    panel.disposed.emit();
    expect(link.isDisposed).toBe(true);
    expect(comm.sent).toEqual([LEAVE]);
    expect(closes).toBe(0);
    expect(comm.isDisposed).toBe(false);
    // an update already on its way, then the kernel's close: both land on the open comm
    comm.receive({ protocol: 1, type: 'update', records: [record(7)] });
    comm.kernelClose();
    expect(link.store.records.map(r => r.seq)).toEqual([0]);
    expect(closes).toBe(0);
  });

  it('an announce replacing a live comm leaves the old one (the kernel closes it) and says hello on the new', () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    const first = k.lastComm!;
    first.receive(snapshot());
    let closes = 0;
    first.close = () => {
      closes++;
    };
    const announced = k.announce();
    expect(first.sent).toEqual([LEAVE]);
    expect(closes).toBe(0);
    expect(announced.sent).toEqual([HELLO]);
    // a late update on the old comm changes nothing; the new comm's snapshot connects
    first.receive({ protocol: 1, type: 'update', records: [record(9)] });
    expect(link.state).toBe('connecting');
    announced.receive(snapshot());
    expect(link.state).toBe('connected');
    expect(link.store.records.map(r => r.seq)).toEqual([0]);
  });

  it("a restart drops a comm the connection disposed without a word, and leaves one it did not (the new process's)", () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    const old = k.lastComm!;
    old.receive(snapshot());
    old.dispose(); // what JupyterLab's connection does to its comms on a restart
    panel.sessionContext.setStatus('restarting');
    expect(old.sent).toEqual([]);
    expect(link.state).toBe('connecting');
    panel.sessionContext.setStatus('idle');
    const fresh = k.lastComm!;
    expect(fresh).not.toBe(old);
    expect(fresh.opened).toEqual(HELLO);
    // a late 'starting' while the hello to the new process is out: the same restart, so the
    // comm is left as it is (its answer, snapshot or close, must find it)
    panel.sessionContext.setStatus('starting');
    expect(fresh.sent).toEqual([]);
    expect(fresh.isDisposed).toBe(false);
    expect(k.comms).toHaveLength(2);
    fresh.receive(snapshot());
    expect(link.state).toBe('connected');
    // after the snapshot a 'starting' is another restart: cleared, the old process's comm
    // forgotten without a word (a leave would only reach the new process)
    panel.sessionContext.setStatus('starting');
    expect(link.state).toBe('connecting');
    expect(fresh.sent).toEqual([]);
    expect(fresh.isDisposed).toBe(true);
  });

  it('a restart it asks for forgets the comm without a leave, and says hello once the new process speaks', () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    // JupyterLab's order: the status signal while the message is handled, then iopubMessage
    const status = (session: string, state: string) => {
      panel.sessionContext.setStatus(state);
      k.iopubMessage.emit({
        header: { session, msg_type: 'status' },
        content: { execution_state: state }
      });
    };
    status('process-1', 'idle');
    const old = k.lastComm!;
    old.receive(snapshot(), 'process-1');
    expect(link.state).toBe('connected');
    // JupyterLab's restart(): 'restarting', then it disposes the connection's comms; a leave
    // sent now would be answered by a close the connection no longer knows
    panel.sessionContext.setStatus('restarting');
    expect(old.sent).toEqual([]);
    expect(old.isDisposed).toBe(true);
    // the old process still answers something: no hello to it
    status('process-1', 'idle');
    expect(k.comms).toHaveLength(1);
    // the server's own 'restarting' is not the new process
    k.iopubMessage.emit({
      header: { session: 'server', msg_type: 'status' },
      content: { execution_state: 'restarting' }
    });
    panel.sessionContext.setStatus('idle');
    expect(k.comms).toHaveLength(1);
    status('process-2', 'starting');
    expect(k.comms).toHaveLength(1);
    status('process-2', 'idle');
    expect(k.comms).toHaveLength(2);
    expect(k.lastComm!.opened).toEqual(HELLO);
    k.lastComm!.receive(snapshot(), 'process-2');
    expect(link.state).toBe('connected');
  });
});

describe('WorkbenchLink and a restart it did not ask for', () => {
  it("a kernel restarted through another connection (only 'starting' seen) clears and says hello again", () => {
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    k.lastComm!.receive(snapshot());
    expect(link.state).toBe('connected');
    panel.sessionContext.setStatus('starting'); // the new process announces itself
    expect(link.state).toBe('connecting');
    expect(link.store.records).toEqual([]);
    panel.sessionContext.setStatus('idle');
    expect(k.comms).toHaveLength(2);
    expect(k.lastComm!.opened).toEqual(HELLO);
  });
});

describe('WorkbenchLink and a restart whose status messages it missed', () => {
  it('a message from a new kernel process (another session id) clears it and says hello again', () => {
    const k = new FakeKernel();
    const link = linkOf(new FakePanel(k));
    k.lastComm!.receive(snapshot(), 'process-1');
    expect(link.state).toBe('connected');
    k.iopubMessage.emit({
      header: { session: 'process-1', msg_type: 'status' },
      content: { execution_state: 'idle' }
    });
    expect(link.state).toBe('connected');
    k.iopubMessage.emit({
      header: { session: 'process-2', msg_type: 'status' },
      content: { execution_state: 'idle' }
    });
    expect(link.store.records).toEqual([]);
    expect(k.comms).toHaveLength(2);
    expect(k.lastComm!.opened).toEqual(HELLO);
    expect(link.state).toBe('connecting');
  });

  it("the new process's 'starting' after its first message leaves the hello already out to it", () => {
    // a restart through another connection: this connection hears the new process (a 'busy')
    // before its 'starting'; the hello went out on the first, and the kernel's answer to it
    // (here ipykernel's close: not loaded) must reach a comm the connection still has
    const k = new FakeKernel();
    const panel = new FakePanel(k);
    const link = linkOf(panel);
    k.lastComm!.receive(snapshot(), 'process-1');
    k.iopubMessage.emit({
      header: { session: 'process-2', msg_type: 'status' },
      content: { execution_state: 'busy' }
    });
    const probe = k.lastComm!;
    expect(probe.opened).toEqual(HELLO);
    panel.sessionContext.setStatus('starting');
    expect(probe.isDisposed).toBe(false);
    expect(probe.sent).toEqual([]);
    expect(k.comms).toHaveLength(2);
    probe.kernelClose();
    expect(link.state).toBe('not-loaded');
  });
});
