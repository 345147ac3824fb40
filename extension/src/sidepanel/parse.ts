/**
 * Tolerant reading of the kernel's comm messages (`protocol.ts` has the types, generated from
 * the JSON Schema `workbench/schemas/comm/sidepanel.schema.json`, the contract).
 *
 * Messages are untrusted input: a kernel of another jax-workbench version, a bug, or any
 * code in the kernel that opens a comm to our target can send anything.  So each reader
 * checks the fields the panel *uses* (types, enums), fills what an older kernel may leave
 * out with null, ignores fields it does not know, drops an item it cannot use instead of
 * the whole message, and never throws: the worst outcome is a `ParsedMessage` of kind
 * `invalid` with a sentence the panel shows as its state.  What the kernel could not say
 * stays unsaid: a compile it could not attribute keeps origin `unknown`, never `user`.
 */

import {
  PROTOCOL,
  type BenchSummary,
  type CallSite,
  type CellBadge,
  type CompileRecord,
  type DeviceMemory,
  type DiffGroup,
  type DiffTotal,
  type KernelDevice,
  type KernelInfo,
  type LiveDiff,
  type MemorySample,
  type MissReason,
  type Origin,
  type Update
} from './protocol';

type Obj = Record<string, unknown>;

/** What the lists of a snapshot or an update carry once read (bad items dropped). */
export type Batch = Required<
  Pick<
    Update,
    'records' | 'dropped' | 'cells' | 'memory' | 'benchmarks' | 'diffs'
  >
> & {
  /** items that were dropped because they were malformed (said in the panel) */
  rejected: number;
};

export type ParsedMessage =
  | { type: 'announce'; version: string }
  | {
      type: 'snapshot';
      version: string;
      kernel: KernelInfo | null;
      batch: Batch;
      /** older memory samples the kernel no longer holds (`Snapshot.memory_dropped`) */
      memoryDropped: number;
    }
  | { type: 'update'; kernel: KernelInfo | null; batch: Batch }
  | { type: 'cleared' }
  | { type: 'bye' }
  | { type: 'error'; message: string }
  | {
      type: 'invalid';
      message: string;
      /** another protocol: nothing else can be trusted */ fatal: boolean;
    };

function isObj(x: unknown): x is Obj {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function str(x: unknown): string | null {
  return typeof x === 'string' ? x : null;
}

function num(x: unknown): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
}

function int(x: unknown): number | null {
  return typeof x === 'number' && Number.isInteger(x) ? x : null;
}

function nonNeg(x: unknown): number | null {
  const n = num(x);
  return n !== null && n >= 0 ? n : null;
}

/**
 * Every member of a string union of the schema, as a list: the compiler checks the record
 * names each member once and nothing else, so the list follows the generated type.
 */
export function members<T extends string>(each: Record<T, true>): readonly T[] {
  return Object.keys(each) as T[];
}

function oneOf<T extends string>(x: unknown, allowed: readonly T[]): T | null {
  return typeof x === 'string' && (allowed as readonly string[]).includes(x)
    ? (x as T)
    : null;
}

/** Read each item of a list with `read`; non-lists give [], unreadable items are counted. */
function list<T>(
  x: unknown,
  read: (item: unknown) => T | null,
  bad: { n: number }
): T[] {
  if (!Array.isArray(x)) {
    if (x !== undefined && x !== null) {
      bad.n++;
    }
    return [];
  }
  const out: T[] = [];
  for (const item of x) {
    let v: T | null = null;
    try {
      v = read(item);
    } catch {
      v = null;
    }
    if (v === null) {
      bad.n++;
    } else {
      out.push(v);
    }
  }
  return out;
}

export function readCallSite(x: unknown): CallSite | null {
  if (!isObj(x)) {
    return null;
  }
  const file = str(x.file);
  const line = int(x.line);
  if (file === null || line === null) {
    return null;
  }
  return {
    file,
    line,
    function: str(x.function) ?? '',
    text: str(x.text) ?? ''
  };
}

const REASON_KINDS = members<MissReason['kind']>({
  new_function: true,
  redefined: true,
  closure: true,
  static_arg: true,
  pytree: true,
  shape: true,
  dtype: true,
  weak_type: true,
  sharding: true,
  context: true,
  cache_cleared: true,
  unknown: true
});

export function readReason(x: unknown): MissReason | null {
  if (typeof x === 'string') {
    // a reason as bare text (older kernels): what kind it is, nobody said
    return {
      kind: 'unknown',
      path: null,
      before: null,
      after: null,
      detail: '',
      text: x
    };
  }
  if (!isObj(x)) {
    return null;
  }
  const text = str(x.text);
  if (text === null) {
    return null;
  }
  return {
    kind: oneOf(x.kind, REASON_KINDS) ?? 'unknown',
    path: str(x.path),
    before: str(x.before),
    after: str(x.after),
    detail: str(x.detail) ?? '',
    text
  };
}

const KINDS = members<CompileRecord['kind']>({
  compile: true,
  lower: true,
  trace: true
});
/** every origin the schema knows, `unknown` (the tracker could not attribute it) included */
export const ORIGINS = members<Origin>({
  user: true,
  jax: true,
  workbench: true,
  unknown: true
});
const PCACHE = members<NonNullable<CompileRecord['persistent_cache']>>({
  hit: true,
  miss: true,
  written: true
});

export function readRecord(x: unknown): CompileRecord | null {
  if (!isObj(x)) {
    return null;
  }
  const fn = str(x.function);
  const kind = oneOf(x.kind, KINDS);
  const seq = int(x.seq);
  if (fn === null || kind === null || seq === null) {
    return null;
  }
  const bad = { n: 0 };
  const trace = nonNeg(x.trace_s);
  const lower = nonNeg(x.lower_s);
  const compile = nonNeg(x.compile_s);
  return {
    function: fn,
    trace_s: trace,
    lower_s: lower,
    compile_s: compile,
    total_s: nonNeg(x.total_s) ?? (trace ?? 0) + (lower ?? 0) + (compile ?? 0),
    kind,
    // an origin this panel does not know (a newer kernel's) or none at all: not known
    origin: oneOf(x.origin, ORIGINS) ?? 'unknown',
    cell: str(x.cell) ?? '',
    cell_run: int(x.cell_run),
    cell_id: str(x.cell_id),
    thread: str(x.thread) ?? '',
    reasons: list(x.reasons, readReason, bad),
    call_site: readCallSite(x.call_site),
    defined_at: str(x.defined_at),
    key: str(x.key) ?? '',
    persistent_cache: oneOf(x.persistent_cache, PCACHE),
    persistent_note: str(x.persistent_note),
    time_saved_s: nonNeg(x.time_saved_s),
    jax_explanation: str(x.jax_explanation),
    inspected_by: str(x.inspected_by),
    started: num(x.started) ?? 0,
    seq
  };
}

export function readDevice(x: unknown): KernelDevice | null {
  if (!isObj(x)) {
    return null;
  }
  const id = int(x.id);
  if (id === null) {
    return null;
  }
  return {
    id,
    platform: str(x.platform) ?? '',
    kind: str(x.kind) ?? '',
    process_index: int(x.process_index) ?? 0,
    memory_stats: x.memory_stats === true
  };
}

export function readKernelInfo(x: unknown): KernelInfo | null {
  if (!isObj(x)) {
    return null;
  }
  const bad = { n: 0 };
  return {
    jax_version: str(x.jax_version) ?? '?',
    backend: str(x.backend) ?? '?',
    process_index: int(x.process_index) ?? 0,
    process_count: int(x.process_count) ?? 1,
    devices: list(x.devices, readDevice, bad)
  };
}

function readDeviceMemory(x: unknown): DeviceMemory | null {
  if (!isObj(x)) {
    return null;
  }
  const id = int(x.id);
  if (id === null) {
    return null;
  }
  return {
    id,
    live_bytes: nonNeg(x.live_bytes) ?? 0,
    bytes_in_use: nonNeg(x.bytes_in_use),
    peak_bytes_in_use: nonNeg(x.peak_bytes_in_use),
    bytes_limit: nonNeg(x.bytes_limit)
  };
}

const WHEN = members<MemorySample['when']>({
  load: true,
  start: true,
  end: true,
  request: true
});

export function readMemorySample(x: unknown): MemorySample | null {
  if (!isObj(x)) {
    return null;
  }
  const t = num(x.t);
  const live = nonNeg(x.live_bytes);
  if (t === null || live === null) {
    return null;
  }
  const bad = { n: 0 };
  return {
    t,
    when: oneOf(x.when, WHEN) ?? 'request',
    cell: str(x.cell),
    cell_id: str(x.cell_id),
    live_bytes: live,
    live_arrays: nonNeg(x.live_arrays) ?? 0,
    devices: list(x.devices, readDeviceMemory, bad)
  };
}

export function readBadge(x: unknown): CellBadge | null {
  if (!isObj(x)) {
    return null;
  }
  const cell = str(x.cell);
  if (cell === null) {
    return null;
  }
  const count = (v: unknown): number => nonNeg(v) ?? 0;
  return {
    cell,
    cell_id: str(x.cell_id),
    run: int(x.run) ?? 0,
    t: num(x.t) ?? 0,
    compiles: count(x.compiles),
    traces: count(x.traces),
    lowers: count(x.lowers),
    compile_s: count(x.compile_s),
    misses: count(x.misses),
    first_reason: str(x.first_reason),
    persistent_hits: count(x.persistent_hits),
    inspections: count(x.inspections)
  };
}

export function readBench(x: unknown): BenchSummary | null {
  if (!isObj(x)) {
    return null;
  }
  const label = str(x.label);
  if (label === null) {
    return null;
  }
  const out: BenchSummary = {
    label,
    cell: str(x.cell),
    cell_id: str(x.cell_id),
    t: num(x.t) ?? 0,
    median_s: nonNeg(x.median_s),
    best_s: nonNeg(x.best_s),
    runs: nonNeg(x.runs) ?? 0
  };
  if (Array.isArray(x.variants)) {
    out.variants = x.variants.filter((v): v is string => typeof v === 'string');
  }
  if (x.interrupted === true) {
    out.interrupted = true;
  }
  return out;
}

function readDiffGroup(x: unknown): DiffGroup | null {
  if (!isObj(x)) {
    return null;
  }
  const what = str(x.what);
  if (what === null) {
    return null;
  }
  const examples = Array.isArray(x.examples)
    ? x.examples.filter((v): v is string => typeof v === 'string').slice(0, 3)
    : [];
  const label = str(x.label);
  return {
    what,
    line: readCallSite(x.line),
    ...(label ? { label } : {}),
    count: int(x.count) ?? 1,
    examples
  };
}

const UNITS = members<DiffTotal['unit']>({
  count: true,
  s: true,
  bytes: true,
  flops: true
});

function readDiffTotal(x: unknown): DiffTotal | null {
  if (!isObj(x)) {
    return null;
  }
  const name = str(x.name);
  if (name === null) {
    return null;
  }
  return {
    name,
    before: num(x.before),
    after: num(x.after),
    unit: oneOf(x.unit, UNITS) ?? 'count'
  };
}

const DIFF_KINDS = members<LiveDiff['kind']>({ jaxpr: true, hlo: true });

export function readDiff(x: unknown): LiveDiff | null {
  if (!isObj(x)) {
    return null;
  }
  const kind = oneOf(x.kind, DIFF_KINDS);
  if (kind === null) {
    return null;
  }
  const bad = { n: 0 };
  return {
    cell: str(x.cell),
    cell_id: str(x.cell_id),
    kind,
    t: num(x.t) ?? 0,
    function: str(x.function) ?? '',
    added: list(x.added, readDiffGroup, bad),
    removed: list(x.removed, readDiffGroup, bad),
    totals: list(x.totals, readDiffTotal, bad)
  };
}

function readBatch(x: Obj): Batch {
  const bad = { n: 0 };
  const records = list(x.records, readRecord, bad);
  const cells = list(x.cells, readBadge, bad);
  const memory = list(x.memory, readMemorySample, bad);
  const benchmarks = list(x.benchmarks, readBench, bad);
  const diffs = list(x.diffs, readDiff, bad);
  const dropped = int(x.dropped);
  return {
    records,
    cells,
    memory,
    benchmarks,
    diffs,
    dropped: dropped !== null && dropped > 0 ? dropped : 0,
    rejected: bad.n
  };
}

/** One comm message's `data`, read; never throws. */
export function parseKernelMessage(data: unknown): ParsedMessage {
  try {
    if (!isObj(data)) {
      return {
        type: 'invalid',
        message: 'The kernel sent a message that is not an object.',
        fatal: false
      };
    }
    if (data.protocol !== PROTOCOL) {
      const p =
        typeof data.protocol === 'number' || typeof data.protocol === 'string'
          ? String(data.protocol)
          : 'none';
      return {
        type: 'invalid',
        message:
          `The kernel's workbench speaks protocol ${p}; this panel speaks protocol ${PROTOCOL}. ` +
          'Install the same jax-workbench version in the kernel and in JupyterLab.',
        fatal: true
      };
    }
    switch (data.type) {
      case 'announce':
        return { type: 'announce', version: str(data.version) ?? '?' };
      case 'snapshot':
        return {
          type: 'snapshot',
          version: str(data.version) ?? '?',
          kernel: readKernelInfo(data.kernel),
          batch: readBatch(data),
          memoryDropped: Math.max(0, int(data.memory_dropped) ?? 0)
        };
      case 'update':
        // `kernel` only once JAX started its backends after the snapshot (the kernel never
        // starts them itself): absent otherwise
        return {
          type: 'update',
          kernel: readKernelInfo(data.kernel),
          batch: readBatch(data)
        };
      case 'cleared':
        return { type: 'cleared' };
      case 'bye':
        return { type: 'bye' };
      case 'error':
        return {
          type: 'error',
          message: str(data.message) ?? 'the kernel reported an error'
        };
      default: {
        const t =
          typeof data.type === 'string'
            ? data.type.slice(0, 40)
            : typeof data.type;
        return {
          type: 'invalid',
          message: `The kernel sent a message of an unknown type (${t}); ignored.`,
          fatal: false
        };
      }
    }
  } catch (err) {
    return {
      type: 'invalid',
      message: `The kernel sent a message the panel cannot read (${String(err)}).`,
      fatal: false
    };
  }
}
