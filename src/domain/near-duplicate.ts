/**
 * The one definition of "near duplicate" among a proposal's possible_duplicates (stage a's top 3):
 * stage a's coverage of the candidate (the share of the proposal's term weight it matches, §7.6a)
 * reaches NEAR_COVERAGE, or the two statements share at least NEAR_DUPLICATE of their content
 * words (Jaccard over lowercase words of ≥ 3 letters or digits, negations left out, so "never"
 * and "always" versions of a rule still count as near). The approval pages mark only such pairs
 * ("near duplicate"; the others are merely similar); the approval policy holds a proposal that
 * nearly repeats a confirmed rule for a person (src/decision/policy/facts.ts, which has the
 * statements but no coverage at intake). Both thresholds are measured by `node
 * dist/eval/duplicates.js` on the eval corpus (eval/README.md).
 */

/** Two statements sharing at least this share (0–1) of their content words are near duplicates. */
export const NEAR_DUPLICATE = 0.6

/**
 * A candidate whose stage-a coverage reaches this is a near duplicate. Measured on the corpus's
 * paraphrase pairs against the unrelated pairs among the top 3: precision 0.85, recall 0.48, 9 of
 * 262 unrelated pairs marked (0.50: precision 0.69, 27 unrelated; 0.60: 0.85, recall 0.43).
 */
export const NEAR_COVERAGE = 0.55

const NEGATION_WORDS = new Set([
  "nicht", "kein", "keine", "keinen", "keinem", "keiner", "keines", "nie", "niemals", "ohne", "verboten", "untersagt",
  "not", "no", "never", "without", "forbidden", "prohibited", "cannot", "dont", "doesnt", "mustnt", "shouldnt", "isnt"
])

/** The content words of a statement: lowercase letters and digits, ≥ 3 characters, negations left out. */
export const contentWords = (statement: string): Set<string> =>
  new Set(statement.normalize("NFKC").toLowerCase().replace(/['’]/g, "").split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3 && !NEGATION_WORDS.has(w)))

/** Jaccard overlap of the content words of two statements (0–1). */
export const nearness = (a: string, b: string): number => {
  const x = contentWords(a)
  const y = contentWords(b)
  if (x.size === 0 || y.size === 0) return 0
  let both = 0
  for (const w of x) if (y.has(w)) both++
  return both / (x.size + y.size - both)
}

/** Whether a candidate is a near duplicate of a statement; `coverage` null where stage a was not asked. */
export const nearDuplicate = (statement: string, candidate: string, coverage: number | null = null): boolean =>
  (coverage !== null && coverage >= NEAR_COVERAGE) || nearness(statement, candidate) >= NEAR_DUPLICATE
