/**
 * One notebook's link to its kernel's workbench (the comm protocol's front-end end).
 *
 * It follows the notebook's session: on a kernel (at start, after a change, after a
 * restart) it registers the comm target, so a later `%load_ext workbench` reaches it
 * (`announce`), and as soon as the kernel is idle it opens a comm with `hello`.  ipykernel
 * closes a comm to an unknown target at once: that close, before any snapshot, is how the
 * link learns the kernel has no workbench (`not-loaded`).  It sends only while the kernel
 * is idle (status signals, never polling), except what a user's click asks for.
 *
 * Everything received goes through `parseKernelMessage` (tolerant) into a `WorkbenchStore`;
 * each cell badge is also written into its cell's metadata (`jax-workbench`) so the badge
 * survives windowed detach and a reload of the saved notebook.
 */

import type { ISessionContext } from '@jupyterlab/apputils';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { Signal, type ISignal } from '@lumino/signaling';

import { parseKernelMessage } from './parse';
import { COMM_TARGET, PROTOCOL, type CellBadge, type KernelInfo, type LiveDiff } from './protocol';
import { WorkbenchStore } from './store';
import type { IWorkbenchLink, LinkState } from './tokens';

export const BADGE_METADATA_KEY = 'jax-workbench';

const HELLO = { protocol: PROTOCOL, type: 'hello', client: 'panel' };

type Kernel_ = Kernel.IKernelConnection;
type CommTarget = (comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg) => void;

/** The cell models of a notebook, the way the link looks for a badge's cell. */
interface MetadataCell {
  readonly id: string;
  getMetadata(key: string): unknown;
  setMetadata(key: string, value: unknown): void;
}

export class WorkbenchLink implements IWorkbenchLink {
  readonly store = new WorkbenchStore();
  private readonly _changed = new Signal<IWorkbenchLink, void>(this);
  private _state: LinkState = 'no-kernel';
  private _message = 'No kernel.';
  private _kernel: Kernel_ | null = null;
  private _comm: Kernel.IComm | null = null;
  /** a snapshot arrived on the current comm */
  private _snapshot = false;
  /** a hello is owed to the kernel as soon as it is idle */
  private _needHello = false;
  /** the kernel asked for `not-loaded` after a close: wait for announce, a click or a restart */
  private _disposed = false;
  private readonly _target: CommTarget = (comm, msg) => this._onAnnounce(comm, msg);

  constructor(readonly notebook: NotebookPanel) {
    const sc = notebook.sessionContext;
    sc.kernelChanged.connect(this._onKernelChanged, this);
    sc.statusChanged.connect(this._onStatus, this);
    sc.connectionStatusChanged.connect(this._onConnection, this);
    notebook.disposed.connect(() => this.dispose());
    this._attach(sc.session?.kernel ?? null);
  }

  get state(): LinkState {
    return this._state;
  }

  get message(): string {
    return this._message;
  }

  get kernel(): KernelInfo | null {
    return this.store.kernel;
  }

  get changed(): ISignal<IWorkbenchLink, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  badge(cellId: string): CellBadge | null {
    return this.store.badges.get(cellId) ?? null;
  }

  diff(cellId: string): LiveDiff | null {
    return this.store.diffs.get(cellId) ?? null;
  }

  /** The "Load workbench" button: a user's click, so it may run while the kernel is busy. */
  async loadWorkbench(): Promise<void> {
    const kernel = this._kernel;
    if (!kernel || this._disposed) return;
    this._setState('connecting', 'Loading the workbench (%load_ext workbench)…');
    let failed: string | null = null;
    try {
      const future = kernel.requestExecute(
        { code: '%load_ext workbench', silent: true, store_history: false },
        true
      );
      future.onIOPub = msg => {
        if (msg.header.msg_type === 'error') {
          const c = msg.content as KernelMessage.IErrorMsg['content'];
          failed = `${String(c.ename)}: ${String(c.evalue)}`;
        }
      };
      const reply = await future.done;
      const content = reply?.content as { status?: string; ename?: unknown; evalue?: unknown } | undefined;
      if (content && content.status === 'error' && !failed) {
        failed = `${String(content.ename)}: ${String(content.evalue)}`;
      }
    } catch (err) {
      failed = String(err);
    }
    if (this._disposed || kernel !== this._kernel) return;
    if (failed) {
      this._setState('not-loaded', `%load_ext workbench failed in the kernel: ${failed}`);
      return;
    }
    // `%load_ext` of a workbench already loaded announces nothing: ask ourselves
    if (this._state !== 'connected' && !this._comm) {
      this._needHello = true;
      this._maybeHello();
    }
  }

  /** Ask the kernel for a memory sample now (a click, or the panel when idle). */
  requestSample(userClick = false): boolean {
    const kernel = this._kernel;
    if (!kernel || !this._comm || this._state !== 'connected') return false;
    if (!userClick && kernel.status !== 'idle') return false;
    try {
      this._comm.send({ protocol: PROTOCOL, type: 'sample' });
      return true;
    } catch {
      return false;
    }
  }

  dispose(): void {
    if (this._disposed) return;
    this._disposed = true;
    this._detach(true);
    Signal.clearData(this);
  }

  // -- kernel lifecycle -------------------------------------------------------------------

  private _onKernelChanged(_: ISessionContext, args: { newValue: Kernel_ | null }): void {
    this._attach(args.newValue ?? null);
  }

  private _onStatus(_: ISessionContext, status: Kernel.Status): void {
    if (this._disposed) return;
    if (status === 'restarting' || status === 'autorestarting') {
      // the connection disposes its comms itself; the target registry survives
      this._dropComm(false);
      this.store.reset();
      this._needHello = true;
      this._setState('connecting', status === 'autorestarting'
        ? 'The kernel died and is restarting…' : 'The kernel is restarting…');
      return;
    }
    if (status === 'dead') {
      this._dropComm(false);
      this.store.reset();
      this._needHello = true;
      this._setState('no-kernel', 'The kernel is dead.');
      return;
    }
    this._maybeHello();
  }

  private _onConnection(_: ISessionContext, status: Kernel.ConnectionStatus): void {
    if (this._disposed) return;
    if (status === 'disconnected' || status === 'connecting') {
      // messages may be lost while the socket is down: ask again afterwards
      if (this._state === 'connected' || this._comm) this._needHello = true;
      return;
    }
    this._maybeHello();
  }

  private _attach(kernel: Kernel_ | null): void {
    // the old kernel may live on (another notebook uses it): tell it to stop pushing to us
    this._detach(true);
    this.store.reset();
    this._kernel = kernel;
    if (!kernel) {
      this._needHello = false;
      this._setState('no-kernel', 'No kernel.');
      return;
    }
    try {
      kernel.registerCommTarget(COMM_TARGET, this._target);
    } catch {
      // a kernel connection that does not handle comms: hello still works
    }
    this._needHello = true;
    this._setState('connecting', 'Waiting for the kernel to be idle…');
    this._maybeHello();
  }

  private _detach(closeComm: boolean): void {
    const kernel = this._kernel;
    this._dropComm(closeComm);
    if (kernel) {
      try {
        kernel.removeCommTarget(COMM_TARGET, this._target);
      } catch {
        // disposed already
      }
    }
    this._kernel = null;
  }

  /** Forget the comm; `close`: tell the kernel (it lives on, e.g. the notebook closed). */
  private _dropComm(close: boolean): void {
    const comm = this._comm;
    this._comm = null;
    this._snapshot = false;
    if (!comm) return;
    comm.onMsg = () => undefined;
    comm.onClose = () => undefined;
    try {
      if (close && !comm.isDisposed && this._kernel && !this._kernel.isDisposed
          && this._kernel.connectionStatus === 'connected') {
        comm.close();
      } else if (!comm.isDisposed) {
        comm.dispose();
      }
    } catch {
      // a comm of a kernel being torn down
    }
  }

  private _maybeHello(): void {
    const kernel = this._kernel;
    if (!this._needHello || !kernel || this._disposed) return;
    if (kernel.status !== 'idle' || kernel.connectionStatus !== 'connected') return;
    this._needHello = false;
    try {
      if (this._comm) {
        this._snapshot = false;
        this._comm.send(HELLO);
      } else {
        const comm = kernel.createComm(COMM_TARGET);
        this._bind(comm);
        comm.open(HELLO);
      }
      if (this._state !== 'connected') this._setState('connecting', 'Asking the kernel for the workbench…');
    } catch (err) {
      this._dropComm(false);
      this._setState('error', `Could not reach the kernel's workbench: ${String(err)}`);
    }
  }

  private _bind(comm: Kernel.IComm): void {
    this._dropComm(true);
    this._comm = comm;
    this._snapshot = false;
    comm.onMsg = msg => this._onMessage(comm, msg?.content?.data);
    comm.onClose = () => this._onClose(comm);
  }

  /** `%load_ext workbench` opened a comm to us: answer hello on it once idle. */
  private _onAnnounce(comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg): void {
    if (this._disposed) return;
    const parsed = parseKernelMessage(msg?.content?.data);
    if (parsed.type !== 'announce') {
      if (parsed.type === 'invalid' && parsed.fatal) this._setState('error', parsed.message);
      try {
        comm.close();
      } catch {
        // already gone
      }
      return;
    }
    this.store.reset();
    this._bind(comm);
    this._needHello = true;
    this._setState('connecting', `The workbench ${parsed.version} was loaded; connecting…`);
    this._maybeHello();
  }

  private _onClose(comm: Kernel.IComm): void {
    if (comm !== this._comm || this._disposed) return;
    const hadSnapshot = this._snapshot;
    this._comm = null;
    this._snapshot = false;
    this.store.reset();
    if (this._state === 'error') {
      this._changed.emit();
      return;
    }
    this._setState('not-loaded', hadSnapshot
      ? 'The workbench was unloaded from this kernel (%unload_ext workbench).'
      : 'The workbench is not loaded in this kernel.');
  }

  private _onMessage(comm: Kernel.IComm, data: unknown): void {
    if (comm !== this._comm || this._disposed) return;
    const msg = parseKernelMessage(data);
    switch (msg.type) {
      case 'snapshot':
        this._snapshot = true;
        this.store.applySnapshot(msg.kernel, msg.version, msg.batch);
        this._writeBadges(msg.batch.cells);
        this._setState('connected', this._connectedMessage());
        return;
      case 'update':
        if (!this._snapshot) return; // a push before our snapshot: the snapshot will hold it
        this.store.apply(msg.batch);
        this._writeBadges(msg.batch.cells);
        if (msg.batch.rejected) this._message = this._connectedMessage();
        this._changed.emit();
        return;
      case 'cleared':
        this.store.clearLedger();
        this._changed.emit();
        return;
      case 'bye':
        // the close follows; say why now
        this._message = 'The workbench was unloaded from this kernel (%unload_ext workbench).';
        return;
      case 'error':
        this._message = `The kernel's workbench reported: ${msg.message}`;
        this._changed.emit();
        return;
      case 'announce':
        return;
      case 'invalid':
        if (msg.fatal) {
          this.store.reset();
          this._setState('error', msg.message);
        } else {
          this.store.rejected++;
          this._message = msg.message;
          this._changed.emit();
        }
        return;
    }
  }

  private _connectedMessage(): string {
    const v = this.store.workbenchVersion;
    const bad = this.store.rejected;
    return `Connected to jax-workbench ${v ?? ''}`.trim() +
      (bad ? ` (${bad} malformed item${bad === 1 ? '' : 's'} ignored)` : '') + '.';
  }

  private _setState(state: LinkState, message: string): void {
    this._state = state;
    this._message = message;
    if (!this._disposed) this._changed.emit();
  }

  /** Each badge into its cell's metadata, found by the notebook's cell id (skipped if absent). */
  private _writeBadges(badges: CellBadge[]): void {
    if (!badges.length) return;
    const cells = this.notebook.content?.model?.cells as unknown as Iterable<MetadataCell> | undefined;
    if (!cells) return;
    const wanted = new Map<string, CellBadge>();
    for (const b of badges) if (b.cell_id) wanted.set(b.cell_id, b);
    try {
      for (const cell of cells) {
        const badge = wanted.get(cell.id);
        if (!badge) continue;
        const value = { badge };
        const old = cell.getMetadata(BADGE_METADATA_KEY);
        if (old !== undefined && JSON.stringify(old) === JSON.stringify(value)) continue;
        cell.setMetadata(BADGE_METADATA_KEY, value);
      }
    } catch {
      // a cell model being disposed: the badge stays in the link
    }
  }
}
