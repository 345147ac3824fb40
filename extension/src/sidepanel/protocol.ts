/**
 * The comm protocol between the kernel's workbench and this extension (target
 * `jax-workbench`), as TypeScript types.  The contract is the JSON Schema
 * `workbench/schemas/comm/panel.schema.json`; these types mirror it.  Messages from the
 * kernel are *untrusted input*: `parseKernelMessage` checks the shape of what the panel
 * uses and drops the rest, so an unexpected field or a wrong type never throws into the
 * page.  Every string from the kernel is shown as text, never as HTML.
 */

export const COMM_TARGET = 'jax-workbench';
export const PROTOCOL = 1;

export interface CallSite {
  file: string;
  line: number;
  function: string;
  text: string;
}

export interface MissReason {
  kind: string;
  path: string;
  before: string | null;
  after: string | null;
  detail: string | null;
  text: string;
}

/** One ledger entry: the cache schema's `compile_record`. */
export interface CompileRecord {
  function: string;
  trace_s: number | null;
  lower_s: number | null;
  compile_s: number | null;
  total_s: number;
  kind: 'compile' | 'lower' | 'trace';
  origin: 'user' | 'jax' | 'workbench';
  cell: string;
  cell_run: number | null;
  cell_id: string | null;
  thread: string;
  reasons: MissReason[];
  call_site: CallSite | null;
  defined_at: string | null;
  key: string;
  persistent_cache: 'hit' | 'miss' | 'written' | null;
  persistent_note: string | null;
  time_saved_s: number | null;
  jax_explanation: string | null;
  inspected_by: string | null;
  started: number;
  seq: number;
}

export interface DeviceInfo {
  id: number;
  platform: string;
  kind: string;
  process_index: number;
  memory_stats: boolean;
}

export interface KernelInfo {
  jax_version: string;
  backend: string;
  process_index: number;
  process_count: number;
  devices: DeviceInfo[];
}

export interface DeviceMemory {
  id: number;
  live_bytes: number;
  bytes_in_use: number | null;
  peak_bytes_in_use: number | null;
  bytes_limit: number | null;
}

export interface MemorySample {
  t: number;
  when: 'load' | 'start' | 'end' | 'request';
  cell: string | null;
  cell_id: string | null;
  live_bytes: number;
  live_arrays: number;
  devices: DeviceMemory[];
}

export interface CellBadge {
  cell: string;
  cell_id: string | null;
  run: number;
  t: number;
  compiles: number;
  traces: number;
  lowers: number;
  compile_s: number;
  misses: number;
  first_reason: string | null;
  persistent_hits: number;
  inspections: number;
}

export interface BenchSummary {
  label: string;
  cell: string | null;
  cell_id: string | null;
  t: number;
  median_s: number | null;
  best_s: number | null;
  runs: number;
  variants?: string[];
  interrupted?: boolean;
}

export interface DiffGroup {
  what: string;
  line: CallSite | null;
  count: number;
  examples: string[];
}

export interface DiffTotal {
  name: string;
  before: number | null;
  after: number | null;
  unit: 'count' | 's' | 'bytes';
}

export interface LiveDiff {
  cell: string | null;
  cell_id: string | null;
  kind: 'jaxpr' | 'hlo';
  t: number;
  function: string;
  added: DiffGroup[];
  removed: DiffGroup[];
  totals: DiffTotal[];
}

export interface Snapshot {
  protocol: 1;
  type: 'snapshot';
  version: string;
  kernel: KernelInfo;
  records: CompileRecord[];
  dropped: number;
  cells: CellBadge[];
  memory: MemorySample[];
  benchmarks: BenchSummary[];
  diffs: LiveDiff[];
}

export interface Update {
  protocol: 1;
  type: 'update';
  /** once JAX started its backends after the snapshot (which then listed no devices) */
  kernel?: KernelInfo;
  records?: CompileRecord[];
  dropped?: number;
  cells?: CellBadge[];
  memory?: MemorySample[];
  benchmarks?: BenchSummary[];
  diffs?: LiveDiff[];
}

export interface Announce {
  protocol: 1;
  type: 'announce';
  version: string;
}
export interface Cleared {
  protocol: 1;
  type: 'cleared';
}
export interface Bye {
  protocol: 1;
  type: 'bye';
}
export interface KernelError {
  protocol: 1;
  type: 'error';
  message: string;
}

export type KernelMessage =
  Announce | Snapshot | Update | Cleared | Bye | KernelError;

export interface Hello {
  protocol: 1;
  type: 'hello';
  client?: string;
}
export interface SampleRequest {
  protocol: 1;
  type: 'sample';
}
export type FrontEndMessage = Hello | SampleRequest;
