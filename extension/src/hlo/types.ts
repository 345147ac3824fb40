/**
 * The parts of the `application/vnd.jax-workbench.hlo+json` payload the HLO view reads: the
 * types generated from `workbench/schemas/hlo.schema.json` (src/generated/hlo.ts).
 */

import type { Unpacked } from '../common/payload';
import type { HloPayload } from '../generated/hlo';

export type {
  CompactInstruction,
  HloCollective,
  HloComputation,
  HloEdge,
  HloGraph,
  HloInstruction,
  HloNode,
  HloPayload
} from '../generated/hlo';
export type { SourceLine } from '../generated/common';

/** The payload as the view reads it: the renderer unpacked it, so `graphs` is there. */
export type UnpackedHloPayload = Unpacked<HloPayload, 'graphs'>;
