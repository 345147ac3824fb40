/**
 * The comm protocol between the kernel's workbench and this extension (target
 * `jax-workbench`): the types generated from the JSON Schema
 * `workbench/schemas/comm/sidepanel.schema.json` (src/generated/comm/sidepanel.ts).  Messages
 * from the kernel are *untrusted input*: `parseKernelMessage` checks the shape of what the
 * panel uses and drops the rest, so an unexpected field or a wrong type never throws into the
 * page.  Every string from the kernel is shown as text, never as HTML.
 */

import type {
  Announce,
  Bye,
  Cleared,
  Hello,
  KernelError,
  Leave,
  SampleRequest,
  Snapshot,
  Update
} from '../generated/comm/sidepanel';
import { COMM_PROTOCOLS } from '../generated/versions';

export const COMM_TARGET = 'jax-workbench';
export const PROTOCOL = COMM_PROTOCOLS.sidepanel;

export type {
  Announce,
  BenchSummary,
  Bye,
  CellBadge,
  Cleared,
  DeviceMemory,
  DiffGroup,
  DiffTotal,
  Hello,
  KernelDevice,
  KernelError,
  KernelInfo,
  Leave,
  LiveDiff,
  MemorySample,
  SampleRequest,
  Snapshot,
  Update
} from '../generated/comm/sidepanel';
export type {
  CallSite,
  CompileRecord,
  MissReason,
  Origin
} from '../generated/common';

/** What the kernel sends. */
export type KernelMessage =
  Announce | Snapshot | Update | Cleared | Bye | KernelError;

/** What the front end sends. */
export type FrontEndMessage = Hello | SampleRequest | Leave;
