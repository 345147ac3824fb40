/** The parts of the `application/vnd.jax-workbench.hlo+json` payload the HLO view reads. */

export interface HloSource {
  file: string;
  line: number;
  function: string;
}

export type NodeKind =
  | 'parameter'
  | 'fusion'
  | 'library'
  | 'collective'
  | 'control'
  | 'constant'
  | 'plumbing'
  | 'op';

export interface HloNode {
  id: string;
  kind: NodeKind;
  opcode: string;
  label: string;
  shape: string;
  bytes: number;
  bytes_moved: number;
  fusion_kind?: string;
  fused_ops?: string[];
  primitives?: string[];
  sources?: HloSource[];
  source_lost?: true;
  output?: true;
  param_index?: number;
  called?: string[];
  /** the instruction's metadata op_name (payload version 2; else taken from `module`) */
  op_name?: string;
}

export interface HloEdge {
  src: string;
  dst: string;
  shape: string;
  bytes: number;
}

export interface HloGraph {
  computation: string;
  nodes: HloNode[];
  edges: HloEdge[];
}

export interface HloInstruction {
  name: string;
  opcode: string;
  shape: string;
  bytes: number;
  operands: string[];
  line: number;
  root?: true;
  called?: string[];
  attrs?: Record<string, string>;
  op_name?: string;
  source?: HloSource | null;
}

/** fused computations list compact rows `[name, opcode, shape, operands]` */
export type CompactInstruction = [string, string, string, string[]];

export interface HloComputation {
  name: string;
  entry: boolean;
  role: string;
  lines: [number, number];
  instructions: Array<HloInstruction | CompactInstruction>;
}

/** A collective XLA inserted (all-reduce, all-gather, ...), as the engine reports it. */
export interface HloCollective {
  name: string;
  kind: string;
  computation: string;
  shape: string;
  bytes: number;
  replica_groups: number[][] | null;
  groups_text: string;
  source_target_pairs: number[][] | null;
  source: HloSource | null;
}

export interface HloPayload {
  version: number;
  kind: 'hlo';
  label: string;
  stage: 'compiled' | 'lowered';
  backend: string;
  device_kinds: string[];
  device_count: number;
  timings: {
    trace_s: number | null;
    lower_s: number | null;
    compile_s: number | null;
  };
  counts: {
    stablehlo_ops: number | null;
    hlo_instructions: number | null;
    fusions: number | null;
    unfused_ops: number | null;
  };
  cost: {
    flops: number | null;
    transcendentals: number | null;
    bytes_accessed: number | null;
    optimal_seconds: number | null;
  };
  memory: Record<string, number | boolean | null>;
  parse_error: string | null;
  collectives?: HloCollective[];
  graphs: Record<string, HloGraph>;
  module?: { name: string; problems: string[]; computations: HloComputation[] };
  cells?: Record<string, { number: number | null; cell_id: string | null }>;
}
