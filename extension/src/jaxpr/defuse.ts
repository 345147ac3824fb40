/**
 * Where each variable is defined (an equation's result, a jaxpr's input or constant) and
 * used (an equation's operand, a jaxpr's result), by row, per scope (see rows.ts
 * `scopeOf`): the same name in two nested jaxprs (a jitted function called twice shares
 * one jaxpr, so both bodies carry the same names) is two variables.
 */

import { scopeOf, type FlatJaxpr } from './rows';
import type { Atom } from './types';

export interface DefUse {
  defs: number[];
  uses: number[];
}

/** The table key of variable `name` in scope `scope` (an open row's index). */
export function varKey(scope: number, name: string): string {
  return `${scope}:${name}`;
}

export function buildDefUse(flat: FlatJaxpr): Map<string, DefUse> {
  const map = new Map<string, DefUse>();
  const entry = (name: string): DefUse => {
    let d = map.get(name);
    if (!d) {
      map.set(name, (d = { defs: [], uses: [] }));
    }
    return d;
  };
  const add = (atoms: Atom[], row: number, def: boolean): void => {
    const scope = scopeOf(flat, row);
    for (const a of atoms) {
      if (a.length === 3 || a[0] === '_') {
        continue;
      }
      const d = entry(varKey(scope, a[0]));
      const list = def ? d.defs : d.uses;
      if (list[list.length - 1] !== row) {
        list.push(row);
      }
    }
  };
  flat.rows.forEach((r, i) => {
    if (r.kind === 'eqn' && r.equation) {
      add(r.equation.outvars, i, true);
      add(r.equation.invars, i, false);
    } else if (r.kind === 'open' && r.jaxpr) {
      add(r.jaxpr.constvars, i, true);
      add(r.jaxpr.invars, i, true);
    } else if (r.kind === 'close' && r.jaxpr) {
      add(r.jaxpr.outvars, i, false);
    }
  });
  return map;
}
