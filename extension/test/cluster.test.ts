import { describe, expect, it } from 'vitest';

import { fmtBytes, fmtSeconds } from '../src/bench/format';

import {
  cellText,
  headline,
  ledgerTable,
  MAX_VARIANTS,
  processRows,
  stepLine,
  type ClusterPayload
} from '../src/cluster/model';

/** a payload shaped as workbench/engine/cluster/compare.py writes it (two processes, one gone
 * after a third answered nothing) */
function payload(): ClusterPayload {
  return {
    version: 1,
    kind: 'cluster',
    view: 'ledger',
    processes: [
      {
        index: 0,
        engine: 0,
        host: 'vm',
        pid: 11,
        devices: ['cpu:0', 'cpu:1'],
        rss_bytes: 250 * 1024 * 1024,
        live_array_bytes: 64,
        compiles_total: 2,
        error: null
      },
      {
        index: 1,
        engine: 1,
        host: 'vm',
        pid: 12,
        devices: ['cpu:2048', 'cpu:2049'],
        rss_bytes: null,
        live_array_bytes: null,
        compiles_total: 1,
        error: null
      },
      {
        index: 2,
        engine: 2,
        host: '',
        pid: null,
        devices: [],
        rss_bytes: null,
        live_array_bytes: null,
        compiles_total: 0,
        error: 'process on engine 2 is gone'
      }
    ],
    rows: [
      {
        function: 'jit(f)',
        diverged: true,
        cells: [
          {
            variants: [
              {
                signature: 'f32[8]',
                statics: '',
                shardings: '{replicated}',
                fingerprint: 'aaa'
              }
            ]
          },
          {
            variants: [
              {
                signature: 'f32[16]',
                statics: 'k=3',
                shardings: '{devices=[2]<=[2]}',
                fingerprint: 'bbb'
              }
            ]
          },
          null
        ]
      }
    ],
    rows_total: 5,
    divergences: [
      {
        function: '',
        kind: 'gone',
        processes: [2],
        text: 'process on engine 2 is gone'
      },
      {
        function: 'jit(f)',
        kind: 'shape',
        processes: [0, 1],
        text:
          'jit(f): the processes split evenly, so none is the odd one out: ' +
          'process 0 compiled f32[8]; process 1 compiled f32[16] static k=3; ' +
          'collectives in jit(f) would wait forever'
      }
    ],
    steps: [
      {
        process: 0,
        source: '%jaxbench',
        label: 'step(x)',
        seconds: 0.001,
        collectives_s: null,
        slowest: false
      },
      {
        process: 1,
        source: '%%jaxprof',
        label: 'step(x)',
        seconds: 0.02,
        collectives_s: 0.005,
        slowest: true
      }
    ],
    straggler: 'process 1 is the straggler',
    gather_s: 0.01
  };
}

describe('the cluster view model', () => {
  it('counts processes, hosts and divergences (a gone process is no divergence)', () => {
    expect(headline(payload())).toBe(
      'cluster: 3 processes on 1 host; 1 divergence'
    );
    const p = payload();
    p.divergences = p.divergences.filter(d => d.kind === 'gone');
    expect(headline(p)).toBe('cluster: 3 processes on 1 host; no divergence');
  });

  it('draws a ledger cell per process, replicated shardings left out', () => {
    const t = ledgerTable(payload());
    expect(t.head).toEqual(['function', 'process 0', 'process 1', 'process 2']);
    expect(t.rows[0].cells).toEqual([
      'jit(f)',
      'f32[8] #aaa',
      'f32[16] static k=3 @{devices=[2]<=[2]} #bbb',
      '-'
    ]);
    expect(t.rows[0].diverged).toBe(true);
    expect(t.more).toBe(4);
  });

  it('folds variants past the limit into "+N more"', () => {
    const v = {
      signature: 'f32[1]',
      statics: '',
      shardings: '',
      fingerprint: 'x'
    };
    const text = cellText({ variants: Array(MAX_VARIANTS + 2).fill(v) });
    expect(text.split('; ')).toHaveLength(MAX_VARIANTS + 1);
    expect(text.endsWith('+2 more')).toBe(true);
  });

  it("names a process that did not answer with the kernel's reason", () => {
    const rows = processRows(payload());
    expect(rows[2]).toEqual({
      label: 'process 2 (engine 2)',
      detail: 'process on engine 2 is gone',
      gone: true
    });
    expect(rows[0].detail).toContain('cpu:0 cpu:1');
    expect(rows[0].detail).toContain(fmtBytes(250 * 1024 * 1024));
    expect(rows[1].detail).toContain('memory n/a');
  });

  it('writes step times with the collectives a profile showed', () => {
    const [a, b] = payload().steps;
    expect(stepLine(a)).toBe(
      `process 0: ${fmtSeconds(0.001)} (%jaxbench step(x))`
    );
    expect(stepLine(b)).toBe(
      `process 1: ${fmtSeconds(0.02)} (%%jaxprof step(x), collectives ${fmtSeconds(0.005)})`
    );
  });
});
