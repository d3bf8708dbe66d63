/**
 * The term rules every source shares: a term the lexicon keeps is normalized, has at most
 * MAX_WORDS words, at least one letter or digit, and none of the file format's separators nor
 * an ellipsis (a phrase pattern such as "etw. ... machen" is not a term a text contains), and
 * no "!" or "?" (an exclamation or a question is an example sentence, not a term).
 */
import { normalizeTerm } from "../../src/search/lexical/lexicon.js"

/** Longer entries are phrases and idioms a query rarely holds word for word. */
export const MAX_WORDS = 4

/** The normalized term, or null when the lexicon does not keep it. */
export const keepTerm = (raw: string): string | null => {
  const term = normalizeTerm(raw)
  if (!/[\p{L}\p{N}]/u.test(term) || /[|\t\n]/.test(term) || term.includes("...") || /[\u2026!?]/.test(term)) return null
  if (term.split(" ").length > MAX_WORDS) return null
  return term
}

/** Terms without repeats, in first-seen order. */
export const distinct = (terms: Iterable<string>): Array<string> => [...new Set(terms)]
