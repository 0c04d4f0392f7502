// The dashboard's words: one catalogue per language, an ES module under strings/ whose
// default export maps a key ("memories.title") to its message. English (strings/en.js) is
// complete; a page never holds a word of its own, only keys.
//
// A message may hold placeholders, `{name}`, filled from `values`; a plural message is an
// object of the language's plural categories, `{ one: "{n} memory", other: "{n} memories" }`,
// chosen by `values.n` through Intl.PluralRules. `t` gives text; `tParts` gives the pieces
// to append when a value is an element (a link or code inside a sentence), in the order
// the language puts them.
//
// Adding a language, Turkish say: copy strings/en.js to strings/tr.js and translate each
// message, keeping the keys and the {placeholders} (a plural message takes the language's
// categories: Turkish has `one` and `other`); import it below beside `en` and add it to
// CATALOGUES; embed it in src/lib.rs (an `asset!` line in ASSETS, like en.js's); then set
// `language = "tr"` (or choose it from navigator.language among CATALOGUES' keys). A key
// missing from a translation falls back to English, with a warning in the console.

import en from "./strings/en.js";

const CATALOGUES = { en };

/// The language the dashboard speaks (a BCP 47 tag, as Intl and `<html lang>` take it).
export const language = "en";

const catalogue = CATALOGUES[language] || en;
const plurals = new Intl.PluralRules(language);
const warned = new Set();

function warnOnce(key, why) {
  if (warned.has(key)) return;
  warned.add(key);
  console.warn(`levh dashboard: ${why}: ${key}`);
}

/// The message of `key` in the language (English when the language lacks it), its plural
/// form chosen by `values.n`; undefined when no catalogue has the key.
function message(key, values) {
  let text = catalogue[key];
  if (text === undefined && catalogue !== en) {
    text = en[key];
    if (text !== undefined) warnOnce(key, `no ${language} message, English shown`);
  }
  if (text === undefined) {
    warnOnce(key, "no message");
    return undefined;
  }
  if (typeof text === "object") text = text[plurals.select(Number(values.n))] ?? text.other;
  return text;
}

/// The message `key` with its placeholders filled from `values` (a placeholder with no
/// value is left as written); the key itself when there is no such message.
export function t(key, values = {}) {
  const text = message(key, values);
  if (text === undefined) return key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/// The words of a static page in the language: an element's `data-i18n` key gives its
/// text (a child marked `data-i18n-part="name"` stays, put where the message says {name}:
/// a label's field), and `data-i18n-attr="aria-label:key;title:key2"` its attributes.
export function translate(root) {
  document.documentElement.lang = language;
  for (const element of root.querySelectorAll("[data-i18n]")) {
    const kept = {};
    for (const part of element.querySelectorAll(":scope > [data-i18n-part]")) kept[part.dataset.i18nPart] = part;
    element.replaceChildren(...tParts(element.dataset.i18n, kept));
  }
  for (const element of root.querySelectorAll("[data-i18n-attr]")) {
    for (const pair of element.dataset.i18nAttr.split(";")) {
      const [name, key] = pair.split(":").map((s) => s.trim());
      element.setAttribute(name, t(key));
    }
  }
}

/// Like `t`, as a list of pieces to append: text, and each value that is an element (not
/// a string or number) in its placeholder's place, e.g. `h("p", {}, ...tParts("home.hint",
/// { connectors: link }))`.
export function tParts(key, values = {}) {
  const text = message(key, values);
  if (text === undefined) return [key];
  const parts = [];
  // split with a group: odd indices are the placeholders' names.
  text.split(/\{(\w+)\}/).forEach((piece, i) => {
    const value = i % 2 === 0 ? piece : piece in values ? values[piece] : `{${piece}}`;
    if (value !== null && typeof value === "object") parts.push(value);
    else if (typeof parts[parts.length - 1] === "string") parts[parts.length - 1] += String(value);
    else parts.push(String(value));
  });
  return parts.filter((part) => part !== "");
}
