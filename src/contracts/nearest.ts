/**
 * The known word nearest to a mistyped one, for "did you mean …?": the config's unknown keys
 * (config/file.ts) and the CLI's unknown commands (ops/cli-help.ts).
 */

/** Optimal string alignment distance (Damerau–Levenshtein with adjacent transpositions). */
export const editDistance = (a: string, b: string): number => {
  const d: Array<Array<number>> = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  const at = (i: number, j: number): number => d[i]?.[j] ?? 0
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1)
      const row = d[i]
      if (row !== undefined) row[j] = v
    }
  }
  return at(a.length, b.length)
}

/**
 * The known word nearest to `unknown` (a key of groundnote.json, a command of the CLI): at most
 * 2 edits (1 for words of up to 5 characters), case ignored, or a known word that starts with it
 * (4 characters or more); null when none is near.
 */
export const nearestKey = (unknown: string, known: ReadonlyArray<string>): string | null => {
  const u = unknown.toLowerCase()
  const limit = u.length <= 5 ? 1 : 2
  let best: { key: string; d: number } | null = null
  for (const key of known) {
    const k = key.toLowerCase()
    const d = u.length >= 4 && k.startsWith(u) ? 1 : editDistance(u, k)
    if (d <= limit && (best === null || d < best.d)) best = { key, d }
  }
  return best?.key ?? null
}
