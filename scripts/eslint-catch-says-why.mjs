// Our one ESLint rule (eslint.config.mjs turns it on as ringside/catch-says-why; test/architecture/lint-rules.test.ts
// checks it fires).
//
// An error dropped without a word hides the next real failure. A catch that discards its error (no binding, a binding
// it never reads, or a promise's rejection handler — `.catch(h)`, `.then(f, h)` — that takes no error or never reads
// it) must say in a comment inside it why that error is safe to ignore (`// already gone`, `// not mounted: the
// caller reports it`), or read the error and handle it.
export const catchSaysWhy = {
  meta: {
    type: 'problem',
    docs: { description: 'a catch that discards its error says why in a comment' },
    messages: {
      unexplained: 'This catch drops its error: handle it, or say in a comment inside why it is safe to ignore.',
    },
    schema: [],
  },
  create(context) {
    const source = context.sourceCode;
    const explained = (node) => source.getCommentsInside(node).length > 0;
    /** True when none of what `node` declares as its error (a catch binding, a handler's parameters) is ever read. */
    const dropsError = (node) =>
      source
        .getDeclaredVariables(node)
        .filter((variable) => variable.defs.some((def) => def.type === 'CatchClause' || def.type === 'Parameter'))
        .every((variable) => variable.references.length === 0);
    const checkHandler = (handler) => {
      const isFunction = handler?.type === 'ArrowFunctionExpression' || handler?.type === 'FunctionExpression';
      if (isFunction && dropsError(handler) && !explained(handler)) context.report({ node: handler, messageId: 'unexplained' });
    };
    return {
      CatchClause(node) {
        if ((node.param === null || dropsError(node)) && !explained(node.body)) context.report({ node, messageId: 'unexplained' });
      },
      'CallExpression[callee.property.name="catch"][arguments.length=1]'(node) {
        checkHandler(node.arguments[0]);
      },
      'CallExpression[callee.property.name="then"][arguments.length=2]'(node) {
        checkHandler(node.arguments[1]);
      },
    };
  },
};
