/**
 * The jaxpr payloads as TypeScript types: `application/vnd.jax-workbench.jaxpr+json` and
 * `jaxpr-compare+json`, generated from `workbench/schemas/jaxpr.schema.json` and
 * `jaxpr-compare.schema.json` (src/generated/), and the payloads as the views read them.
 */

import type { Unpacked } from '../common/payload';
import type { JaxprComparePayload } from '../generated/jaxpr-compare';
import type { Equation, JaxprPayload } from '../generated/jaxpr';

export type {
  Atom,
  Aval,
  Equation,
  Jaxpr,
  JaxprPayload,
  TreeSummary
} from '../generated/jaxpr';
export type { JaxprComparePayload } from '../generated/jaxpr-compare';

/** An equation's source line (JAX always gives its column), when it kept one. */
export type Source = NonNullable<Equation['source']>;

/** A jaxpr payload as the views read it: unpacked, so `avals` and `jaxpr` are there. */
export type UnpackedJaxprPayload = Unpacked<JaxprPayload, 'avals' | 'jaxpr'>;

/** `%jaxpr --compare` as the view reads it: every stage unpacked. */
export type UnpackedJaxprComparePayload = Omit<
  JaxprComparePayload,
  'stages'
> & {
  stages: UnpackedJaxprPayload[];
};
