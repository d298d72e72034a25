// Shared by the spec tests: a spec must fail with a SpecError at the given position, saying what.

import { strict as assert } from 'node:assert';
import { SpecError } from '../../native/specs/parse';
import { resolveEventSpec, type ResolveContext } from '../../native/specs/resolve';

export function expectSpecError(spec: string, ctx: ResolveContext, position: number, pattern: RegExp, term?: string): void {
  assert.throws(
    () => resolveEventSpec(spec, ctx),
    (error: unknown) => {
      assert.ok(error instanceof SpecError, `expected SpecError, got ${String(error)}`);
      assert.equal(error.position, position, error.message);
      assert.match(error.message, pattern);
      if (term !== undefined) assert.equal(error.term, term);
      return true;
    },
    spec,
  );
}
