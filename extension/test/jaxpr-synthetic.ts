/**
 * A synthetic jaxpr payload of about `n` equations for tests and timings: `layers` pjit
 * bodies (nested jaxprs) each of equal parts, with a scan body inside every fourth layer,
 * source lines spread over a `%%jaxpr` cell, and variable names unique as JAX makes them.
 */

import type {
  Atom,
  Aval,
  Equation,
  Jaxpr,
  UnpackedJaxprPayload
} from '../src/jaxpr/types';

const PRIMS = [
  'dot_general',
  'add',
  'mul',
  'tanh',
  'exp',
  'reduce_sum',
  'sub',
  'div',
  'broadcast_in_dim',
  'transpose'
];

export function syntheticPayload(
  n = 12000,
  layers = 24,
  cell = 3
): UnpackedJaxprPayload {
  const avals: Aval[] = [
    {
      text: 'f32[128,128]',
      shape: [128, 128],
      dtype: 'float32',
      weak_type: false,
      sharding: null
    },
    {
      text: 'f32[16,128]',
      shape: [16, 128],
      dtype: 'float32',
      weak_type: false,
      sharding: null
    },
    {
      text: 'f32[]',
      shape: [],
      dtype: 'float32',
      weak_type: false,
      sharding: null
    },
    {
      text: 'i32[16]',
      shape: [16],
      dtype: 'int32',
      weak_type: false,
      sharding: null
    }
  ];
  let counter = 0;
  const fresh = (aval: number): Atom => [`v${(counter++).toString(36)}`, aval];
  const hist: Record<string, number> = {};
  let total = 0;
  let top = 0;
  const eqn = (
    prim: string,
    invars: Atom[],
    outvars: Atom[],
    line: number,
    sub?: Jaxpr,
    param = 'jaxpr'
  ): Equation => {
    hist[prim] = (hist[prim] ?? 0) + 1;
    total++;
    const e: Equation = {
      primitive: prim,
      params:
        prim === 'dot_general'
          ? {
              dimension_numbers: '(([1], [0]), ([], []))',
              precision: 'None',
              preferred_element_type: 'float32'
            }
          : prim === 'reduce_sum'
            ? { axes: '(1,)', out_sharding: 'None' }
            : {},
      invars,
      outvars,
      source: {
        file: `<workbench-cell-${cell}>`,
        line,
        column: 4,
        function: 'loss'
      },
      name_stack: `jvp(loss)/layer${line}`
    };
    if (sub) {
      e.params[param] = '<jaxpr>';
      e.subjaxprs = [{ param, jaxpr: sub }];
    }
    return e;
  };
  const body = (count: number, x: Atom, w: Atom, layer: number): Jaxpr => {
    const eqns: Equation[] = [];
    let h = x;
    for (let i = 0; i < count; i++) {
      const prim = PRIMS[i % PRIMS.length];
      const out = fresh(prim === 'reduce_sum' ? 2 : 1);
      const ins: Atom[] =
        prim === 'dot_general'
          ? [h, w]
          : prim === 'reduce_sum'
            ? [h]
            : prim === 'mul'
              ? [h, ['', 2, '2.0']]
              : [h, x];
      eqns.push(
        eqn(prim, ins, out[1] === 2 ? [out] : [out], 2 + ((layer * 7 + i) % 28))
      );
      if (out[1] !== 2) {
        h = out;
      }
    }
    return { constvars: [], invars: [x, w], outvars: [h], eqns, consts: [] };
  };
  const ins: Atom[] = [];
  for (let l = 0; l < layers * 5; l++) {
    ins.push(fresh(0));
  }
  let h = fresh(1);
  ins.push(h);
  const perLayer = Math.floor((n - layers) / layers);
  const topEqns: Equation[] = [];
  for (let l = 0; l < layers; l++) {
    const x = fresh(1);
    const w = fresh(0);
    let inner: Jaxpr;
    if (l % 4 === 0) {
      // a scan nested in the pjit body
      const sx = fresh(1);
      const sw = fresh(0);
      const scanBody = body(Math.floor(perLayer / 2) - 1, sx, sw, l);
      const ix = fresh(1);
      const iw = fresh(0);
      const rest = body(perLayer - Math.floor(perLayer / 2) - 1, ix, iw, l);
      const out = fresh(1);
      rest.eqns.unshift(eqn('scan', [ix, iw], [out], 5, scanBody));
      inner = rest;
    } else {
      inner = body(perLayer, x, w, l);
    }
    const out = fresh(1);
    topEqns.push(
      eqn('pjit', [h, ins[l * 5]], [out], 30, {
        ...inner,
        invars: inner.invars
      })
    );
    top++;
    h = out;
  }
  return {
    version: 3,
    kind: 'jaxpr',
    label: `synthetic (${total} equations)`,
    function: 'loss',
    transforms: ['grad'],
    in_avals: ins.map(a => avals[a[1]].text),
    out_avals: [avals[1].text],
    timings: { trace: 0.5 },
    stats: { equations: total, top_level_equations: top, histogram: hist },
    truncated: false,
    trees: { in: [], out: [] },
    cells: {},
    avals,
    jaxpr: {
      constvars: [],
      invars: ins,
      outvars: [h],
      eqns: topEqns,
      consts: []
    }
  };
}

/**
 * The signatures of a 12,000-equation function and of a 36,000-equation gradient holding
 * it: backward equations drawn from the forward's few signatures and interleaved with it,
 * the worst case for a diff (`a` is a subsequence of `b`).
 */
export function functionAndGradient(): { a: string[]; b: string[] } {
  const alpha = [
    'dot_general f32[16,128]',
    'tanh f32[16,128]',
    'add f32[16,128]',
    'mul f32[]',
    'mul f32[16,128]',
    'sub f32[]'
  ];
  let seed = 3;
  const pick = (): string =>
    alpha[
      Math.floor(
        ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 6
      )
    ];
  const a = Array.from({ length: 12000 }, pick);
  const b: string[] = [];
  let left = 24000;
  a.forEach((x, i) => {
    b.push(x);
    if (i % 2 && left > 0) {
      b.push(pick());
      left--;
    }
  });
  while (left-- > 0) {
    b.push(pick());
  }
  return { a, b };
}
