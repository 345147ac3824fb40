import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

import { kindOf, mimeType, unpack, type Payload } from '../src/common/payload';

describe('payload', () => {
  it('maps kinds and MIME types both ways', () => {
    expect(mimeType('hlo')).toBe('application/vnd.jax-workbench.hlo+json');
    expect(kindOf(mimeType('jaxpr-compare'))).toBe('jaxpr-compare');
    expect(kindOf('text/html')).toBeNull();
  });

  it('unpacks gzip+base64 fields and leaves plain payloads alone', async () => {
    const fields = { graphs: { main: { nodes: [1, 2, 3] } }, module: null };
    const data = gzipSync(Buffer.from(JSON.stringify(fields))).toString(
      'base64'
    );
    const packed: Payload = {
      version: 2,
      kind: 'hlo',
      label: 'f',
      packed: { encoding: 'gzip+base64', fields: ['graphs', 'module'], data }
    };
    const out = await unpack(packed);
    expect(out.graphs).toEqual(fields.graphs);
    expect(out.label).toBe('f');
    expect('packed' in out).toBe(false);
    const plain: Payload = { version: 1, kind: 'bench' };
    expect(await unpack(plain)).toBe(plain);
  });

  it('refuses an unknown encoding', async () => {
    const bad = {
      version: 2,
      kind: 'hlo',
      packed: { encoding: 'zstd', fields: [], data: '' }
    };
    await expect(unpack(bad as unknown as Payload)).rejects.toThrow(/encoding/);
  });
});
