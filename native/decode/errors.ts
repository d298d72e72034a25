// The one error the decoder throws: bad bytes found while decoding ONE record in detail.
// The bulk walk never throws; it counts DecodeAnomaly entries instead.

export class DecodeError extends Error {
  /** Byte offset (in the ring copy / buffer being decoded) where the problem was found. */
  readonly offset: number;
  /** What was being decoded, e.g. `SAMPLE.callchain.nr`. */
  readonly what: string;
  /** Why, without the offset: a caller that knows where the buffer came from names the place itself. */
  readonly detail: string | undefined;

  constructor(offset: number, what: string, message?: string) {
    super(`cannot decode ${what} at byte ${offset}${message ? `: ${message}` : ''}`);
    this.name = 'DecodeError';
    this.offset = offset;
    this.what = what;
    this.detail = message;
  }
}
