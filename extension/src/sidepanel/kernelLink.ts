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
 * A second notebook on the same kernel in one page: JupyterLab lets only the first
 * connection to a kernel handle comms (`handleComms`), so the second notebook's connection
 * can neither open a comm nor hear the kernel's.  Its link *follows* a link whose
 * connection does (its `LinkPeers` find it): it shows that link's state and store (the kernel
 * pushes the same news to every comm) and writes the badges of its own cells.  When no such
 * link is left (the leader's notebook closed), it asks its peers for a connection of its own,
 * made the way JupyterLab makes them so comms stay with one connection per kernel.
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
import {
  COMM_TARGET,
  PROTOCOL,
  type CellBadge,
  type FrontEndMessage,
  type KernelInfo,
  type LiveDiff
} from './protocol';
import { WorkbenchStore } from './store';
import type { IWorkbenchLink, LinkState } from './tokens';

export const BADGE_METADATA_KEY = 'jax-workbench';

const HELLO = {
  protocol: PROTOCOL,
  type: 'hello',
  client: 'panel'
} satisfies FrontEndMessage;
/** done with a comm: the kernel closes it (see `_dropComm`) */
const LEAVE = { protocol: PROTOCOL, type: 'leave' } satisfies FrontEndMessage;

type Kernel_ = Kernel.IKernelConnection;
type CommTarget = (comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg) => void;

/** What a link needs from the other links of the page (see `WorkbenchLinks`). */
export interface LinkPeers {
  /** another live link whose own connection to kernel `kernelId` handles comms */
  leaderFor(link: WorkbenchLink, kernelId: string): WorkbenchLink | null;
  /** a new connection to the kernel, handling comms if no other connection in the page does */
  connect(kernel: Kernel_): Kernel_ | null;
}

/** The cell models of a notebook, the way the link looks for a badge's cell. */
interface MetadataCell {
  readonly id: string;
  getMetadata(key: string): unknown;
  setMetadata(key: string, value: unknown): void;
}

export class WorkbenchLink implements IWorkbenchLink {
  private readonly _store = new WorkbenchStore();
  private readonly _changed = new Signal<IWorkbenchLink, void>(this);
  private _state: LinkState = 'no-kernel';
  private _message = 'No kernel.';
  /** the notebook's connection (status signals) */
  private _kernel: Kernel_ | null = null;
  /** the connection comms go over: the notebook's, a spare one, or none (following) */
  private _commKernel: Kernel_ | null = null;
  /** a connection this link made for itself (disposed with it) */
  private _spare: Kernel_ | null = null;
  /** the link this one follows (its notebook's connection does not handle comms) */
  private _leader: WorkbenchLink | null = null;
  private _comm: Kernel.IComm | null = null;
  /** a snapshot arrived on the current comm */
  private _snapshot = false;
  /** the kernel process's message session id, from the snapshot: another one means a restart
   * (a restart asked for by another connection may reach us with no status we can see) */
  private _kernelSession: string | null = null;
  /** a hello is owed to the kernel as soon as it is idle */
  private _needHello = false;
  /** a restart was seen and its new process has not answered yet (snapshot or close): a
   * 'starting' now is that same restart's, and the comm out is the new process's */
  private _restartPending = false;
  /** the session of the process whose status messages came last (see `_onIopub`) */
  private _processSession: string | null = null;
  /** a restart is under way from this process: no hello until another one speaks (the old
   * process may still answer, and its comms are about to be forgotten by the connection) */
  private _restartFrom: string | null = null;
  private _disposed = false;
  private readonly _target: CommTarget = (comm, msg) =>
    this._onAnnounce(comm, msg);

  constructor(
    readonly notebook: NotebookPanel,
    private readonly _peers: LinkPeers | null = null
  ) {
    const sc = notebook.sessionContext;
    sc.kernelChanged.connect(this._onKernelChanged, this);
    sc.statusChanged.connect(this._onStatus, this);
    sc.connectionStatusChanged.connect(this._onConnection, this);
    notebook.disposed.connect(() => this.dispose());
    this._attach(sc.session?.kernel ?? null);
  }

  /** what the link knows (its leader's, while following) */
  get store(): WorkbenchStore {
    return this._leader ? this._leader.store : this._store;
  }

  /** whether this link speaks to the kernel itself (another link may follow it) */
  get leads(): boolean {
    return !this._disposed && !this._leader && this._commKernel !== null;
  }

  /** the kernel id its comms go to */
  get commKernelId(): string | null {
    return this._commKernel?.id ?? null;
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
    if (this._leader) {
      return this._leader.loadWorkbench();
    }
    const kernel = this._kernel;
    if (!kernel || this._disposed) {
      return;
    }
    this._setState(
      'connecting',
      'Loading the workbench (%load_ext workbench)…'
    );
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
      const content = reply?.content as
        { status?: string; ename?: unknown; evalue?: unknown } | undefined;
      if (content && content.status === 'error' && !failed) {
        failed = `${String(content.ename)}: ${String(content.evalue)}`;
      }
    } catch (err) {
      failed = String(err);
    }
    if (this._disposed || kernel !== this._kernel) {
      return;
    }
    if (failed) {
      this._setState(
        'not-loaded',
        `%load_ext workbench failed in the kernel: ${failed}`
      );
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
    if (this._leader) {
      return this._leader.requestSample(userClick);
    }
    const kernel = this._kernel;
    if (!kernel || !this._comm || this._state !== 'connected') {
      return false;
    }
    if (!userClick && kernel.status !== 'idle') {
      return false;
    }
    try {
      this._comm.send({ protocol: PROTOCOL, type: 'sample' });
      return true;
    } catch {
      return false;
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._detach(true);
    Signal.clearData(this);
  }

  // -- kernel lifecycle -------------------------------------------------------------------

  private _onKernelChanged(
    _: ISessionContext,
    args: { newValue: Kernel_ | null }
  ): void {
    this._attach(args.newValue ?? null);
  }

  private _onStatus(_: ISessionContext, status: Kernel.Status): void {
    if (this._disposed || this._leader) {
      return;
    }
    if (status === 'starting' && this._restartPending) {
      // the restart seen already (its new process's first message came before this
      // status): the hello out is the new process's, and its answer must find the comm
      this._maybeHello();
      return;
    }
    // 'starting' alone: another connection (a second notebook, another tab) restarted it
    if (
      status === 'restarting' ||
      status === 'autorestarting' ||
      (status === 'starting' &&
        (this._comm !== null || this._state === 'connected'))
    ) {
      // Forget the comm without a word: on 'restarting' the connection disposes its comms
      // right after this signal, so a `leave` would be answered by a close it no longer
      // knows ("Comm not found"); on 'starting' the old process is gone already.
      this._dropComm(false);
      this._kernelSession = null;
      this._restartPending = true;
      this._restartFrom = status === 'starting' ? null : this._processSession;
      this._store.reset();
      this._needHello = true;
      this._setState(
        'connecting',
        status === 'autorestarting'
          ? 'The kernel died and is restarting…'
          : 'The kernel is restarting…'
      );
      return;
    }
    if (status === 'dead') {
      this._restartPending = false;
      this._restartFrom = null;
      this._dropComm(false);
      this._store.reset();
      this._needHello = true;
      this._setState('no-kernel', 'The kernel is dead.');
      return;
    }
    this._maybeHello();
  }

  private _onConnection(
    _: ISessionContext,
    status: Kernel.ConnectionStatus
  ): void {
    if (this._disposed || this._leader) {
      return;
    }
    if (status === 'disconnected' || status === 'connecting') {
      // messages may be lost while the socket is down: ask again afterwards
      if (this._state === 'connected' || this._comm) {
        this._needHello = true;
      }
      return;
    }
    this._maybeHello();
  }

  private _attach(kernel: Kernel_ | null): void {
    // the old kernel may live on (another notebook uses it): tell it to stop pushing to us
    this._detach(true);
    this._restartPending = false;
    this._restartFrom = null;
    this._processSession = null;
    this._store.reset();
    this._kernel = kernel;
    if (!kernel) {
      this._needHello = false;
      this._setState('no-kernel', 'No kernel.');
      return;
    }
    if (kernel.handleComms === false) {
      this._follow();
      return;
    }
    this._speakOver(kernel);
  }

  /** Comms over `conn` (the notebook's connection or a spare one to the same kernel). */
  private _speakOver(conn: Kernel_): void {
    this._commKernel = conn;
    conn.iopubMessage.connect(this._onIopub, this);
    try {
      conn.registerCommTarget(COMM_TARGET, this._target);
    } catch {
      // a kernel connection that does not handle comms: hello still works
    }
    this._needHello = true;
    this._setState('connecting', 'Waiting for the kernel to be idle…');
    this._maybeHello();
  }

  /** This notebook's connection does not handle comms: follow a link whose does. */
  private _follow(): void {
    const kernel = this._kernel;
    if (!kernel || this._disposed) {
      return;
    }
    const leader = this._peers?.leaderFor(this, kernel.id) ?? null;
    if (leader) {
      this._leader = leader;
      leader.changed.connect(this._onLeaderChanged, this);
      this._onLeaderChanged();
      return;
    }
    let spare: Kernel_ | null = null;
    try {
      spare = this._peers?.connect(kernel) ?? null;
    } catch {
      spare = null;
    }
    if (spare && spare.handleComms !== false) {
      this._spare = spare;
      // a new connection opens its socket after this: say hello once it has
      spare.connectionStatusChanged.connect(() => this._maybeHello(), this);
      this._speakOver(spare);
      return;
    }
    spare?.dispose();
    this._setState(
      'error',
      'Another connection to this kernel (another page or extension) handles its comms: ' +
        'this notebook cannot reach the workbench. Open the panel from a notebook of that connection.'
    );
  }

  /** Called by `WorkbenchLinks` when links come and go: a follower without a live leader looks again. */
  relink(): void {
    if (
      this._disposed ||
      !this._kernel ||
      this._kernel.handleComms !== false ||
      this._spare
    ) {
      return;
    }
    const leader = this._leader;
    if (leader && leader.leads && leader.commKernelId === this._kernel.id) {
      return;
    }
    this._unfollow();
    this._follow();
  }

  private _unfollow(): void {
    this._leader?.changed.disconnect(this._onLeaderChanged, this);
    this._leader = null;
  }

  private _onLeaderChanged(): void {
    const leader = this._leader;
    if (!leader || this._disposed) {
      return;
    }
    if (!leader.leads || leader.commKernelId !== this._kernel?.id) {
      this.relink();
      return;
    }
    this._state = leader.state;
    this._message = leader.message;
    if (leader.state === 'connected') {
      this._writeBadges([...leader.store.badges.values()]);
    }
    this._changed.emit();
  }

  private _detach(closeComm: boolean): void {
    const conn = this._commKernel;
    conn?.iopubMessage.disconnect(this._onIopub, this);
    this._kernelSession = null;
    this._unfollow();
    this._dropComm(closeComm);
    if (conn) {
      try {
        conn.removeCommTarget(COMM_TARGET, this._target);
      } catch {
        // disposed already
      }
    }
    this._commKernel = null;
    this._kernel = null;
    const spare = this._spare;
    this._spare = null;
    if (spare && !spare.isDisposed) {
      spare.dispose();
    }
  }

  /**
   * Forget the comm; `leave`: tell the kernel (it lives on, e.g. the notebook closed).
   *
   * The page never closes a comm the kernel may still write to: an update already on its
   * way would reach a comm the kernel connection no longer knows, and it logs "Comm not
   * found for comm id".  It sends `leave` instead and stops listening; the kernel sends
   * nothing more on the comm and closes it, and that close disposes the page's comm (what
   * arrives before it lands on a comm still open, and is ignored).
   */
  private _dropComm(leave: boolean): void {
    const comm = this._comm;
    this._comm = null;
    this._snapshot = false;
    if (!comm) {
      return;
    }
    comm.onMsg = () => undefined;
    comm.onClose = () => undefined;
    try {
      const conn = this._commKernel;
      if (
        leave &&
        !comm.isDisposed &&
        conn &&
        !conn.isDisposed &&
        conn.connectionStatus === 'connected'
      ) {
        comm.send(LEAVE);
      } else if (!comm.isDisposed) {
        // the kernel is gone or restarting (it forgot the comm): nothing can arrive on it
        comm.dispose();
      }
    } catch {
      // a comm of a kernel being torn down
    }
  }

  private _maybeHello(): void {
    const kernel = this._kernel;
    const conn = this._commKernel;
    if (
      !this._needHello ||
      !kernel ||
      !conn ||
      this._disposed ||
      this._restartFrom !== null
    ) {
      return;
    }
    if (kernel.status !== 'idle' || conn.connectionStatus !== 'connected') {
      return;
    }
    this._needHello = false;
    try {
      if (this._comm) {
        this._snapshot = false;
        this._comm.send(HELLO);
      } else {
        const comm = conn.createComm(COMM_TARGET);
        this._bind(comm);
        comm.open(HELLO);
      }
      if (this._state !== 'connected') {
        this._setState('connecting', 'Asking the kernel for the workbench…');
      }
    } catch (err) {
      this._dropComm(false);
      this._setState(
        'error',
        `Could not reach the kernel's workbench: ${String(err)}`
      );
    }
  }

  private _bind(comm: Kernel.IComm): void {
    this._dropComm(true);
    this._comm = comm;
    this._snapshot = false;
    comm.onMsg = msg => {
      const session = msg?.header?.session;
      this._onMessage(
        comm,
        msg?.content?.data,
        typeof session === 'string' ? session : null
      );
    };
    comm.onClose = () => this._onClose(comm);
  }

  /** `%load_ext workbench` opened a comm to us: answer hello on it once idle. */
  private _onAnnounce(
    comm: Kernel.IComm,
    msg: KernelMessage.ICommOpenMsg
  ): void {
    if (this._disposed) {
      return;
    }
    const parsed = parseKernelMessage(msg?.content?.data);
    if (parsed.type !== 'announce') {
      if (parsed.type === 'invalid' && parsed.fatal) {
        this._setState('error', parsed.message);
      }
      // closing is safe here: the kernel sends nothing unasked on a comm that never said hello
      try {
        comm.close();
      } catch {
        // already gone
      }
      return;
    }
    this._store.reset();
    this._bind(comm);
    this._needHello = true;
    this._setState(
      'connecting',
      `The workbench ${parsed.version} was loaded; connecting…`
    );
    this._maybeHello();
  }

  private _onClose(comm: Kernel.IComm): void {
    if (comm !== this._comm || this._disposed) {
      return;
    }
    const hadSnapshot = this._snapshot;
    this._restartPending = false;
    this._comm = null;
    this._snapshot = false;
    this._store.reset();
    if (this._state === 'error') {
      this._changed.emit();
      return;
    }
    this._setState(
      'not-loaded',
      hadSnapshot
        ? 'The workbench was unloaded from this kernel (%unload_ext workbench).'
        : 'The workbench is not loaded in this kernel.'
    );
  }

  /** A message from another kernel process than the snapshot's: the kernel restarted. */
  private _onIopub(_: Kernel_, msg: KernelMessage.IIOPubMessage): void {
    // status messages only: the server writes some messages itself (an output rate limit
    // warning) under its own session id
    if (msg?.header?.msg_type !== 'status') {
      return;
    }
    const session = msg?.header?.session;
    if (this._disposed || this._leader || !session) {
      return;
    }
    this._processSession = session;
    if (
      this._restartFrom !== null &&
      session !== this._restartFrom &&
      (msg.content as { execution_state?: string }).execution_state !==
        'restarting' // the server's own, not the process's
    ) {
      this._restartFrom = null; // the new process speaks: the hello may go
      this._maybeHello();
    }
    if (!this._kernelSession || session === this._kernelSession) {
      return;
    }
    this._kernelSession = null;
    this._restartPending = true;
    // the old process is gone: its comm is forgotten without a word (a `leave` would only
    // reach the new process, which never knew the comm)
    this._dropComm(false);
    this._store.reset();
    this._needHello = true;
    this._setState('connecting', 'The kernel was restarted…');
    this._maybeHello();
  }

  private _onMessage(
    comm: Kernel.IComm,
    data: unknown,
    session: string | null = null
  ): void {
    if (comm !== this._comm || this._disposed) {
      return;
    }
    const msg = parseKernelMessage(data);
    switch (msg.type) {
      case 'snapshot':
        this._restartPending = false;
        this._snapshot = true;
        this._kernelSession = session;
        this._store.applySnapshot(
          msg.kernel,
          msg.version,
          msg.batch,
          msg.memoryDropped
        );
        this._writeBadges(msg.batch.cells);
        this._setState('connected', this._connectedMessage());
        return;
      case 'update':
        if (!this._snapshot) {
          return;
        } // a push before our snapshot: the snapshot will hold it
        this._store.apply(msg.batch, msg.kernel);
        this._writeBadges(msg.batch.cells);
        if (msg.batch.rejected) {
          this._message = this._connectedMessage();
        }
        this._changed.emit();
        return;
      case 'cleared':
        this._store.clearLedger();
        this._changed.emit();
        return;
      case 'bye':
        // the close follows; say why now
        this._message =
          'The workbench was unloaded from this kernel (%unload_ext workbench).';
        return;
      case 'error':
        this._message = `The kernel's workbench reported: ${msg.message}`;
        this._changed.emit();
        return;
      case 'announce':
        return;
      case 'invalid':
        if (msg.fatal) {
          this._store.reset();
          this._setState('error', msg.message);
        } else {
          this._store.rejected++;
          this._message = msg.message;
          this._changed.emit();
        }
        return;
    }
  }

  private _connectedMessage(): string {
    const v = this._store.workbenchVersion;
    const bad = this._store.rejected;
    return (
      `Connected to jax-workbench ${v ?? ''}`.trim() +
      (bad ? ` (${bad} malformed item${bad === 1 ? '' : 's'} ignored)` : '') +
      '.'
    );
  }

  private _setState(state: LinkState, message: string): void {
    this._state = state;
    this._message = message;
    if (!this._disposed) {
      this._changed.emit();
    }
  }

  /** Each badge into its cell's metadata, found by the notebook's cell id (skipped if absent). */
  private _writeBadges(badges: CellBadge[]): void {
    if (!badges.length) {
      return;
    }
    const cells = this.notebook.content?.model?.cells as unknown as
      Iterable<MetadataCell> | undefined;
    if (!cells) {
      return;
    }
    const wanted = new Map<string, CellBadge>();
    for (const b of badges) {
      if (b.cell_id) {
        wanted.set(b.cell_id, b);
      }
    }
    try {
      for (const cell of cells) {
        const badge = wanted.get(cell.id);
        if (!badge) {
          continue;
        }
        const value = { badge };
        const old = cell.getMetadata(BADGE_METADATA_KEY);
        if (
          old !== undefined &&
          JSON.stringify(old) === JSON.stringify(value)
        ) {
          continue;
        }
        cell.setMetadata(BADGE_METADATA_KEY, value);
      }
    } catch {
      // a cell model being disposed: the badge stays in the link
    }
  }
}
