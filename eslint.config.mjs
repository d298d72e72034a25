// ESLint for every TypeScript and JavaScript file we write (`npm run lint`, a step of `npm test`; editors read the
// same file). Formatting is Prettier's job (.prettierrc.json); eslint-config-prettier, last, turns off every rule
// that would argue with it.
//
// Which globals a file may use is the TypeScript program's business: each runtime has its own tsconfig (the webview
// sees the DOM and not Node, Node code sees Node and not the DOM, the neutral core neither), so `no-undef` is off for
// TypeScript, as typescript-eslint advises. The plain scripts (*.mjs, run by Node) get Node's globals.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier/flat';
import tseslint from 'typescript-eslint';
import { catchSaysWhy } from './scripts/eslint-catch-says-why.mjs';

// The globals a Node script sees: exactly those of the Node that runs ESLint (the one that runs the scripts), so no
// list is kept by hand. `globals` (the usual package) is not a dependency.
const nodeGlobals = Object.fromEntries(
  [...Object.getOwnPropertyNames(globalThis), 'require', 'module', 'exports', '__dirname', '__filename'].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  {
    // native/decode/kernels is AssemblyScript (asc compiles it, not tsc): typescript-eslint's type information does not apply.
    ignores: ['node_modules/', 'out/', 'dist/', 'fixtures-bin/', 'test-artifacts/', '.cache/', '**/*.d.ts', 'native/decode/kernels/'],
  },
  js.configs.recommended,
  {
    plugins: { ringside: { rules: { 'catch-says-why': catchSaysWhy } } },
    rules: {
      'ringside/catch-says-why': 'error',
      // An empty block says nothing; an empty catch must say why ignoring the error is safe (a comment inside it
      // counts), or handle it.
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: {
        // Each file is checked in the program of the tsconfig that owns it (tsconfig.json's references).
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A promise nobody awaits loses its rejection; a promise where a boolean or a void callback is expected is a
      // bug; awaiting a non-promise is a mistake about what a call returns.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // A type-only import says so, so tsc and esbuild erase it and the import rules can tell it from a runtime one.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // A boundary says what crosses it: a type, or `unknown` and a check (tests may use `any` for stand-ins).
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: nodeGlobals },
  },
  prettier,
);
