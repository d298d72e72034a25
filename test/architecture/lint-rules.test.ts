// The ESLint rule of our own (scripts/eslint-catch-says-why.mjs, on in eslint.config.mjs): a catch that drops its error must say why. Checked on snippets, so
// the rule is known to fire; `npm run lint` applies it to the tree.
import * as assert from 'node:assert/strict';
import path from 'node:path';
import { Linter, type Rule } from 'eslint';

const root = path.resolve(__dirname, '../../..');
// tsc compiles import() to require(), which cannot load an ES module in Node 20: this keeps it an import.
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<{ catchSaysWhy: Rule.RuleModule }>;

async function problems(code: string): Promise<string[]> {
  const { catchSaysWhy } = await importModule(path.join(root, 'scripts/eslint-catch-says-why.mjs'));
  const linter = new Linter({ configType: 'flat' });
  const config = { plugins: { ringside: { rules: { 'catch-says-why': catchSaysWhy } } }, rules: { 'ringside/catch-says-why': 'error' as const } };
  return linter.verify(code, config).map((m) => `${m.line}: ${m.ruleId ?? m.message}`);
}

describe('architecture: our lint rule, a catch that drops its error says why', () => {
  it('flags a catch without a binding or a comment, and a promise .catch whose handler takes no error', async () => {
    assert.deepEqual(await problems('try { f(); } catch { g(); }\np.catch(() => undefined);\n'), ['1: ringside/catch-says-why', '2: ringside/catch-says-why']);
  });

  it('flags the same drop in disguise: a binding never read, a rejection handler of .then', async () => {
    const code = [
      'try { f(); } catch (error) { g(); }',
      'p.catch((error) => undefined);',
      'p.then(() => true, () => false);',
      'p.then(() => true, function (error) { return false; });',
    ].join('\n');
    assert.deepEqual(await problems(code), [
      '1: ringside/catch-says-why',
      '2: ringside/catch-says-why',
      '3: ringside/catch-says-why',
      '4: ringside/catch-says-why',
    ]);
  });

  it('passes a catch that says why, or binds the error', async () => {
    const code = [
      'try { f(); } catch { /* already gone */ }',
      'try { f(); } catch (error) { report(error); }',
      'p.catch(() => { /* the caller sees it */ });',
      'p.catch((error) => report(error));',
      'try { f(); } catch (error) { g(); /* counted below: g() */ }',
      'p.then(() => true, (error) => report(error));',
      'p.then(() => true, () => { /* a closed page: the caller tries again */ return false; });',
      'p.then(() => true);',
    ].join('\n');
    assert.deepEqual(await problems(code), []);
  });
});
