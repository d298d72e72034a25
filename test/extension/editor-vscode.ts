// The part of the `vscode` API the editor's breakpoint logic (extension/editor/editor-integration.ts) touches:
// decorations, providers, emitters, quick picks never shown, and the messages it shows, kept in `shown` for a test
// to read. Also loaded by scripts run as uid 65534 (test/extension/line-probes.test.ts), so it needs no test runner.

export interface ShownMessages {
  readonly information: string[];
  readonly warning: string[];
}

export function editorVscode(shown: ShownMessages) {
  const disposable = {
    dispose() {
      /* nothing held */
    },
  };
  class EventEmitter<T> {
    listeners: ((value: T) => void)[] = [];
    event = (listener: (value: T) => void) => {
      this.listeners.push(listener);
      return disposable;
    };
    fire(value: T) {
      for (const listener of this.listeners) listener(value);
    }
    dispose() {
      this.listeners = [];
    }
  }
  return {
    EventEmitter,
    ThemeColor: class {
      constructor(readonly id: string) {}
    },
    OverviewRulerLane: { Left: 1 },
    MarkdownString: class {
      isTrusted = true;
      constructor(public value = '') {}
      appendText(text: string) {
        this.value += text;
        return this;
      }
    },
    Hover: class {
      constructor(readonly contents: { value: string }) {}
    },
    window: {
      createTextEditorDecorationType: () => disposable,
      onDidChangeVisibleTextEditors: () => disposable,
      visibleTextEditors: [],
      showInformationMessage: async (message: string) => {
        shown.information.push(message);
        return undefined;
      },
      showWarningMessage: async (message: string) => {
        shown.warning.push(message);
        return undefined;
      },
    },
    languages: { registerCodeLensProvider: () => disposable, registerHoverProvider: () => disposable },
  };
}
