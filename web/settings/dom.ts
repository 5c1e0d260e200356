/**
 * Element building without markup strings: every piece of text, whatever an admin or the API
 * put in it, becomes a text node. There is no path from data to `innerHTML`.
 */

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>;

/**
 * An HTML element with its attributes and children: `on…` functions become listeners, `true`
 * an empty attribute; null, undefined and false are left out.
 * @example h('button', { type: 'button', onclick: save }, 'Save')
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * {@link h} for SVG elements (the usage chart): attributes are set as attributes, never as
 * markup, and text, a key name included, becomes a text node.
 */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number | null | undefined> = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== null && value !== undefined) element.setAttribute(name, String(value));
  append(element, ...children);
  return element;
}

/** Appends children, strings and numbers as text nodes; null, undefined and false are skipped. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Removes every child of the element. */
export function clear(element: Element): void {
  while (element.firstChild) element.removeChild(element.firstChild);
}

/** The element's children replaced by these, as {@link append} takes them. */
export function replaceChildren(element: Element, ...children: Child[]): void {
  clear(element);
  append(element, ...children);
}

let ids = 0;
/** A unique element id, for label `for` and `aria-describedby`. */
export function uid(prefix: string): string {
  return `${prefix}-${++ids}`;
}

/** Waits `ms` after the last call before running `run` (condition checks as the admin types). */
export function debounce<A extends unknown[]>(run: (...args: A) => void, ms: number): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args: A) => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => run(...args), ms);
  };
}
