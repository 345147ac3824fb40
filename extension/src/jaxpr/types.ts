/**
 * The jaxpr payloads as TypeScript types: `application/vnd.jax-workbench.jaxpr+json`
 * (workbench/schemas/jaxpr.schema.json, docs/mime-jaxpr.md) and `jaxpr-compare+json`.
 */

import type { CellMap } from '../common/cells';

export interface Aval {
  text: string;
  shape: (number | string)[] | null;
  dtype: string | null;
  weak_type: boolean;
  sharding: string | null;
}

/** `[name, aval]` for a variable (`_`: an unread result), `["", aval, text]` for a literal. */
export type Atom = [string, number] | [string, number, string];

export interface Source {
  file: string;
  line: number;
  column: number;
  function: string;
}

export interface Equation {
  primitive: string;
  params: Record<string, string>;
  invars: Atom[];
  outvars: Atom[];
  source: Source | null;
  name_stack: string;
  subjaxprs?: { param: string; jaxpr: Jaxpr }[];
  effects?: string[];
}

export interface Jaxpr {
  constvars: Atom[];
  invars: Atom[];
  outvars: Atom[];
  eqns: Equation[];
  consts: string[];
}

/** A pytree summary: `{"name": "ps", "summary": "list[24] of {...}", "leaves": 120}`. */
export interface TreeSummary {
  name: string;
  summary: string;
  leaves: number;
}

export interface JaxprPayload {
  version: number;
  kind: 'jaxpr';
  label: string;
  function: string;
  transforms: string[];
  in_avals: string[];
  out_avals: string[];
  timings: { trace: number | null };
  stats: {
    equations: number;
    top_level_equations: number;
    histogram: Record<string, number>;
  };
  truncated: boolean;
  avals: Aval[];
  jaxpr: Jaxpr | null;
  trees?: { in?: TreeSummary[]; out?: TreeSummary[] };
  cells?: CellMap;
}

export interface JaxprComparePayload {
  version: number;
  kind: 'jaxpr-compare';
  stages: JaxprPayload[];
}
