// @vitest-environment jsdom
/**
 * The one renderer in front of every feature view: a payload of a newer schema version than
 * the extension was built with is not drawn (its fields may mean something else now) but
 * said so in one line, above the kernel's text; the versions it knows are drawn.
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { describe, expect, it, vi } from 'vitest';

// jsdom has no DragEvent, which @lumino/dragdrop (under @lumino/widgets) touches on import
vi.hoisted(() => {
  const g = globalThis as any;
  if (typeof g.DragEvent === 'undefined') {
    g.DragEvent = class DragEvent extends g.MouseEvent {};
  }
});

import { versionProblem, type Payload } from '../src/common/payload';
import { WorkbenchRenderer } from '../src/common/renderer';
import type { FeatureView } from '../src/common/featureView';
import { PAYLOAD_VERSIONS } from '../src/generated/versions';

const HLO = 'application/vnd.jax-workbench.hlo+json';

function model(payload: unknown): IRenderMime.IMimeModel {
  return {
    data: { [HLO]: payload, 'text/plain': 'HloModule jit_f' },
    metadata: {},
    trusted: true,
    setData: () => undefined
  } as unknown as IRenderMime.IMimeModel;
}

/** A feature view that records what it was asked to draw. */
function recordingView(): { drawn: Payload[]; factory: () => FeatureView } {
  const drawn: Payload[] = [];
  return {
    drawn,
    factory: () => ({
      render: (host, payload, ctx) => {
        drawn.push(payload);
        host.textContent = `drew ${payload.kind} v${payload.version}`;
        ctx.interactive();
      }
    })
  };
}

describe('payload versions', () => {
  const known = PAYLOAD_VERSIONS.hlo;

  it('draws the version the extension was built with, and older ones', async () => {
    for (const version of [known, known - 1]) {
      const { drawn, factory } = recordingView();
      const r = new WorkbenchRenderer(HLO, factory);
      await r.renderModel(model({ version, kind: 'hlo', label: 'f' }));
      expect(drawn.map(p => p.version)).toEqual([version]);
      expect(r.node.getAttribute('data-jwb-ready')).toBe('1');
      r.dispose();
    }
  });

  it('says a newer payload needs a newer extension instead of drawing it', async () => {
    const { drawn, factory } = recordingView();
    const r = new WorkbenchRenderer(HLO, factory);
    await r.renderModel(model({ version: known + 1, kind: 'hlo', graphs: 7 }));
    expect(drawn).toEqual([]);
    const note = r.node.querySelector('.jwb-ext-error')!.textContent!;
    expect(note).toContain(
      `made by a newer jax-workbench (hlo payload v${known + 1})`
    );
    expect(note).toContain(`understands up to v${known}`);
    expect(note).toContain('upgrade the extension');
    // the kernel's own text stays readable below the note
    expect(r.node.querySelector('pre')!.textContent).toBe('HloModule jit_f');
    expect(r.node.getAttribute('data-jwb-ready')).toBe('error');
    r.dispose();
  });

  it('replaces a drawn output by the note when a display update is newer', async () => {
    let disposed = 0;
    const r = new WorkbenchRenderer(HLO, () => ({
      render: host => {
        host.textContent = 'drawn';
      },
      dispose: () => {
        disposed++;
      }
    }));
    await r.renderModel(model({ version: known, kind: 'hlo' }));
    expect(r.node.textContent).toBe('drawn');
    await r.renderModel(model({ version: known + 1, kind: 'hlo' }));
    expect(r.node.textContent).not.toContain('drawn');
    expect(disposed).toBe(1);
    r.dispose();
  });

  it('knows every kind by the version of its schema', () => {
    for (const [kind, version] of Object.entries(PAYLOAD_VERSIONS)) {
      expect(versionProblem(kind, { version, kind })).toBeNull();
      expect(versionProblem(kind, { version: version + 1, kind })).toContain(
        `${kind} payload v${version + 1}`
      );
    }
    expect(versionProblem('hlo', { kind: 'hlo' })).toContain(
      'no payload version'
    );
    expect(versionProblem('hlo', { version: '2', kind: 'hlo' })).toContain(
      'no payload version'
    );
  });
});
