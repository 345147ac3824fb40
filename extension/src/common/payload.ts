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

import type { Packed } from '../generated/common';
import { PAYLOAD_VERSIONS, type Kind } from '../generated/versions';

export type { Kind } from '../generated/versions';
export type { Packed } from '../generated/common';

/** Every kind the kernel emits (one schema file each, workbench/schemas/<kind>.schema.json). */
export const KINDS = Object.keys(PAYLOAD_VERSIONS) as Kind[];

export function mimeType(kind: string): string {
  return `${MIME_PREFIX}${kind}${MIME_SUFFIX}`;
}

export function kindOf(mime: string): string | null {
  return mime.startsWith(MIME_PREFIX) && mime.endsWith(MIME_SUFFIX)
    ? mime.slice(MIME_PREFIX.length, mime.length - MIME_SUFFIX.length)
    : null;
}

/**
 * A payload as a view reads it: `unpack` restored the fields `packed` held (`F`, those the
 * kind's schema requires when it is not packed).
 */
export type Unpacked<P extends { packed?: unknown }, F extends keyof P> = Omit<
  P,
  'packed' | F
> &
  Required<Pick<P, F>>;

/** Any payload before its kind is known: the envelope every schema shares. */
export interface Payload {
  version: number;
  kind: string;
  packed?: Packed;
  [key: string]: unknown;
}

/**
 * Why this extension will not draw `payload` as a `kind` output, or null when it can: a
 * payload of a newer schema version than the extension was built with (its fields may mean
 * something else now), or one without a version at all.  Older versions are drawn: the views
 * read what earlier kernels sent.
 */
export function versionProblem(kind: string, payload: unknown): string | null {
  const known = (PAYLOAD_VERSIONS as Record<string, number | undefined>)[kind];
  const version =
    typeof payload === 'object' && payload !== null
      ? (payload as { version?: unknown }).version
      : undefined;
  if (
    typeof version !== 'number' ||
    !Number.isInteger(version) ||
    version < 1
  ) {
    return `This ${kind} output carries no payload version, so it is not one jax-workbench made.`;
  }
  if (known === undefined) {
    return `This extension does not know the ${kind} kind of output (payload v${version}): upgrade the jax-workbench extension.`;
  }
  if (version > known) {
    return (
      `This output was made by a newer jax-workbench (${kind} payload v${version}); ` +
      `this extension understands up to v${known} — upgrade the extension ` +
      '(pip install -U jax-workbench, then reload the page).'
    );
  }
  return null;
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
