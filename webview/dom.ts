// The page's one way to make an element: text goes in with textContent, never as markup, so names from the
// system (comms, symbols, files) cannot inject anything.

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, parent?: Element, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  parent?.appendChild(e);
  return e;
}
