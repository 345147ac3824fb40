// Messages and fakes shared by the panel tests (not a test file itself).
import { Signal } from '@lumino/signaling';

import { COMM_TARGET } from '../src/sidepanel/protocol';

export function record(
  seq: number,
  over: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    function: `f${seq}`,
    trace_s: 0.001,
    lower_s: 0.002,
    compile_s: 0.01,
    total_s: 0.013,
    kind: 'compile',
    origin: 'user',
    cell: String(1 + (seq % 5)),
    cell_run: 1,
    cell_id: `cell-${seq % 5}`,
    thread: 'MainThread',
    reasons: [],
    call_site: null,
    defined_at: null,
    key: `k${seq}`,
    persistent_cache: null,
    persistent_note: null,
    time_saved_s: null,
    jax_explanation: null,
    inspected_by: null,
    started: 1000 + seq,
    seq,
    ...over
  };
}

export function sample(
  t: number,
  live: number,
  over: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    t,
    when: 'end',
    cell: String(t),
    cell_id: `cell-${t}`,
    live_bytes: live,
    live_arrays: 1,
    devices: [
      {
        id: 0,
        live_bytes: live,
        bytes_in_use: null,
        peak_bytes_in_use: null,
        bytes_limit: null
      }
    ],
    ...over
  };
}

export const KERNEL = {
  jax_version: '0.10.2',
  backend: 'cpu',
  process_index: 0,
  process_count: 1,
  devices: Array.from({ length: 8 }, (_, id) => ({
    id,
    platform: 'cpu',
    kind: 'cpu',
    process_index: 0,
    memory_stats: false
  }))
};

export function snapshot(
  over: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    protocol: 1,
    type: 'snapshot',
    version: '0.1.0',
    kernel: KERNEL,
    records: [record(0)],
    dropped: 0,
    cells: [],
    memory: [sample(1, 100)],
    benchmarks: [],
    diffs: [],
    ...over
  };
}

export function badge(cellId: string, compiles = 1): Record<string, unknown> {
  return {
    cell: '3',
    cell_id: cellId,
    run: 1,
    t: 5,
    compiles,
    traces: compiles,
    lowers: compiles,
    compile_s: 0.02,
    misses: 0,
    first_reason: null,
    persistent_hits: 0,
    inspections: 0
  };
}

export class FakeComm {
  onMsg: (msg: any) => void = () => undefined;
  onClose: (msg: any) => void = () => undefined;
  opened: unknown = undefined;
  sent: unknown[] = [];
  closed = false;
  isDisposed = false;
  constructor(
    readonly targetName: string,
    readonly commId: string
  ) {}
  open(data: unknown): unknown {
    this.opened = data;
    return {};
  }
  send(data: unknown): unknown {
    this.sent.push(data);
    return {};
  }
  close(): void {
    this.closed = true;
    this.isDisposed = true;
  }
  dispose(): void {
    this.isDisposed = true;
  }
  /** the kernel sends `data` on this comm */
  receive(data: unknown, session = 'kernel-session-1'): void {
    this.onMsg({
      header: { session, msg_type: 'comm_msg' },
      content: { comm_id: this.commId, data }
    });
  }
  /** the kernel closes this comm */
  kernelClose(): void {
    this.onClose({ content: { comm_id: this.commId, data: {} } });
  }
}

let nComms = 0;

export class FakeKernel {
  /** JupyterLab gives comms to one connection per kernel in a page; others have this false */
  constructor(
    readonly id = `kernel-${++nComms}`,
    public handleComms = true
  ) {}
  status = 'idle';
  connectionStatus = 'connected';
  isDisposed = false;
  connectionStatusChanged = new Signal<any, any>(this);
  iopubMessage = new Signal<any, any>(this);
  dispose(): void {
    this.isDisposed = true;
    Signal.clearData(this);
  }
  comms: FakeComm[] = [];
  targets = new Map<string, (comm: any, msg: any) => void>();
  executed: any[] = [];
  createComm(target: string): FakeComm {
    if (!this.handleComms) {
      throw new Error('Comms are disabled on this kernel connection');
    }
    const c = new FakeComm(target, `c${++nComms}`);
    this.comms.push(c);
    return c;
  }
  registerCommTarget(target: string, cb: (comm: any, msg: any) => void): void {
    if (!this.handleComms) {
      return;
    } // JupyterLab registers it, but the connection never calls it
    this.targets.set(target, cb);
  }
  removeCommTarget(target: string, cb: unknown): void {
    if (this.targets.get(target) === cb) {
      this.targets.delete(target);
    }
  }
  requestExecute(content: unknown): any {
    this.executed.push(content);
    return {
      onIOPub: null,
      done: Promise.resolve({ content: { status: 'ok' } })
    };
  }
  /** `%load_ext workbench` in the kernel: it opens its announce comm to our target */
  announce(): FakeComm {
    const c = new FakeComm(COMM_TARGET, `k${++nComms}`);
    this.targets.get(COMM_TARGET)?.(c, {
      content: {
        comm_id: c.commId,
        target_name: COMM_TARGET,
        data: { protocol: 1, type: 'announce', version: '0.1.0' }
      }
    });
    return c;
  }
  get lastComm(): FakeComm | undefined {
    return this.comms[this.comms.length - 1];
  }
}

export class FakeCell {
  metadata = new Map<string, unknown>();
  constructor(readonly id: string) {}
  getMetadata(key: string): unknown {
    return this.metadata.get(key);
  }
  setMetadata(key: string, value: unknown): void {
    this.metadata.set(key, value);
  }
}

export class FakeSession {
  kernelChanged = new Signal<any, any>(this);
  statusChanged = new Signal<any, any>(this);
  connectionStatusChanged = new Signal<any, any>(this);
  iopubMessage = new Signal<any, any>(this);
  session: { kernel: FakeKernel | null } = { kernel: null };
  constructor(kernel: FakeKernel | null) {
    this.session.kernel = kernel;
  }
  setStatus(status: string): void {
    const k = this.session.kernel;
    if (k) {
      k.status = status;
    }
    this.statusChanged.emit(status);
  }
  changeKernel(kernel: FakeKernel | null): void {
    const old = this.session.kernel;
    this.session.kernel = kernel;
    this.kernelChanged.emit({
      name: 'kernel',
      oldValue: old,
      newValue: kernel
    });
  }
}

export class FakePanel {
  disposed = new Signal<any, void>(this);
  title = { label: 'demo.ipynb' };
  context = { path: 'demo.ipynb' };
  id = 'nb-1';
  sessionContext: FakeSession;
  content: { model: { cells: FakeCell[] } };
  constructor(
    kernel: FakeKernel | null,
    cellIds: string[] = ['cell-a', 'cell-b']
  ) {
    this.sessionContext = new FakeSession(kernel);
    this.content = { model: { cells: cellIds.map(id => new FakeCell(id)) } };
  }
}
