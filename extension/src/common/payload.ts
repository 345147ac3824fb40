/**
 * The payloads the kernel sends: `application/vnd.jax-workbench.<kind>+json`, each
 * `{"version", "kind", ...}` as described by `workbench/schemas/<kind>.schema.json`.
 *
 * Big payloads (a 24-layer model's HLO graphs and module, a 12,000-equation jaxpr) arrive
 * *packed*: the bulky fields are gzip-compressed JSON in base64 under `packed`, so the saved
 * notebook stays small.  `unpack` restores the plain payload with the browser's own
 * `DecompressionStream`; a payload without `packed` is returned as is.
 */

export const MIME_PREFIX = 'application/vnd.jax-workbench.';
export const MIME_SUFFIX = '+json';

/** Every kind the kernel emits (one schema file each). */
export const KINDS = [
  'jaxpr',
  'jaxpr-compare',
  'hlo',
  'bench',
  'sharding',
  'mesh-explorer',
  'cache',
  'cache-cell',
  'cache-persistent',
  'profile'
] as const;
export type Kind = (typeof KINDS)[number];

export function mimeType(kind: string): string {
  return `${MIME_PREFIX}${kind}${MIME_SUFFIX}`;
}

export function kindOf(mime: string): string | null {
  return mime.startsWith(MIME_PREFIX) && mime.endsWith(MIME_SUFFIX)
    ? mime.slice(MIME_PREFIX.length, mime.length - MIME_SUFFIX.length)
    : null;
}

/** `packed`: `{"encoding": "gzip+base64", "fields": [...], "data": "<base64>"}`. */
export interface Packed {
  encoding: 'gzip+base64';
  fields: string[];
  data: string;
}

export interface Payload {
  version: number;
  kind: string;
  packed?: Packed;
  [key: string]: unknown;
}

function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) {
    out[i] = bin.charCodeAt(i);
  }
  return out;
}

/** Gunzip `bytes` to text with the platform's DecompressionStream (browsers, Node 18+). */
export async function gunzipText(bytes: Uint8Array): Promise<string> {
  const stream = new Blob([bytes])
    .stream()
    .pipeThrough(new DecompressionStream('gzip'));
  return await new Response(stream).text();
}

/** The plain payload: packed fields decompressed and merged in, `packed` removed. */
export async function unpack(payload: Payload): Promise<Payload> {
  const packed = payload.packed;
  if (!packed) {
    return payload;
  }
  if (packed.encoding !== 'gzip+base64') {
    throw new Error(
      `unknown packed encoding ${JSON.stringify(packed.encoding)}`
    );
  }
  const fields = JSON.parse(
    await gunzipText(base64ToBytes(packed.data))
  ) as Record<string, unknown>;
  const out: Payload = { ...payload, ...fields };
  delete out.packed;
  return out;
}
