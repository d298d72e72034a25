// One-line messages for every error the core can raise. Typed errors carry their own hint
// (PerfError: the sysctl or capability to change; SpecError: the bad term); anything else is
// reported by message so a user never sees a stack trace (RINGSIDE_DEBUG=1 shows it).

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const hint = (error as { hint?: unknown }).hint;
    const text = error.message.replace(/\s+$/, '');
    return typeof hint === 'string' && hint && !text.includes(hint) ? `${text} (${hint})` : text;
  }
  return String(error);
}
