// Our one ESLint rule (eslint.config.mjs turns it on as ringside/catch-says-why; test/architecture/lint-rules.test.ts
// checks it fires).
//
// An error dropped without a word hides the next real failure. A catch that discards its error (no binding, or a
// promise's .catch with a callback that takes none) must say in a comment inside it why that error is safe to ignore
// (`// already gone`, `// not mounted: the caller reports it`), or bind the error and handle it.
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
    return {
      CatchClause(node) {
        if (node.param === null && !explained(node.body)) context.report({ node, messageId: 'unexplained' });
      },
      'CallExpression[callee.property.name="catch"][arguments.length=1]'(node) {
        const handler = node.arguments[0];
        const isFunction = handler.type === 'ArrowFunctionExpression' || handler.type === 'FunctionExpression';
        if (isFunction && handler.params.length === 0 && !explained(handler)) context.report({ node: handler, messageId: 'unexplained' });
      },
    };
  },
};
