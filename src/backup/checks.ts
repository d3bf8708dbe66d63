/**
 * The checks of backup run, probe, verify and restore as pure functions over the facts the
 * worker read (architecture.md §11): each answers a Check {check, ok, detail?}. Details name
 * tables, counts and rule ids, never content.
 */
import type { FileFacts, RuleDigest } from "./jobs.js"
import type { Check, Counts } from "./schemas.js"

/** At most `max` names, then "… and n more". */
export const nameList = (names: ReadonlyArray<string>, max = 20): string =>
  names.length <= max ? names.join(", ") : `${names.slice(0, max).join(", ")} … and ${names.length - max} more`

/** Tables whose count in `counts` is below `floor` (a table missing in `counts` counts 0). */
export const belowFloor = (counts: Counts, floor: Counts): ReadonlyArray<string> =>
  Object.keys(floor).sort().filter((t) => (counts[t] ?? 0) < (floor[t] ?? 0)).map((t) => `${t} ${counts[t] ?? 0} < ${floor[t]}`)

/** The larger count of every table of the floors. */
export const maxCounts = (...floors: ReadonlyArray<Counts | null>): Counts => {
  const out: Record<string, number> = {}
  for (const f of floors) {
    if (f === null) continue
    for (const [t, n] of Object.entries(f)) out[t] = Math.max(out[t] ?? 0, n)
  }
  return out
}

/** verified_counts as stored (JSON of table → count), or null when absent or not such an object. */
export const parseCounts = (json: string | null | undefined): Counts | null => {
  if (json === null || json === undefined) return null
  try {
    const value: unknown = JSON.parse(json)
    if (typeof value !== "object" || value === null || Array.isArray(value)) return null
    const out: Record<string, number> = {}
    for (const [k, v] of Object.entries(value)) if (typeof v === "number" && Number.isFinite(v)) out[k] = v
    return out
  } catch {
    return null
  }
}

export const integrity = (facts: FileFacts): Check =>
  facts.integrity === "ok" ? { check: "integrity", ok: true } : { check: "integrity", ok: false, detail: facts.integrity ?? "not checked" }

export const metaScope = (facts: FileFacts, scope: string): Check =>
  facts.metaScope === scope
    ? { check: "meta-scope", ok: true }
    : { check: "meta-scope", ok: false, detail: `meta.scope is ${JSON.stringify(facts.metaScope ?? "")}, not "${scope}"` }

/** schema_version is one this build knows (1 … known). */
export const schemaVersion = (facts: FileFacts, known: number): Check =>
  facts.schemaVersion >= 1 && facts.schemaVersion <= known
    ? { check: "schema-version", ok: true, detail: String(facts.schemaVersion) }
    : {
      check: "schema-version",
      ok: false,
      detail: facts.schemaVersion === 0 ? "no meta table" : `schema_version ${facts.schemaVersion} is unknown to this build (knows up to ${known})`
    }

export const sampleQuery = (facts: FileFacts): Check =>
  facts.sample === null
    ? { check: "sample-query", ok: false, detail: "not run" }
    : { check: "sample-query", ok: facts.sample.found, detail: facts.sample.detail }

/** Every append-only count ≥ verified_counts, the floor of the last passed verify or probe. */
export const notOlderThanLastVerified = (facts: FileFacts, floor: Counts | null): Check => {
  if (floor === null) return { check: "not-older-than-last-verified", ok: true, detail: "no verified counts yet" }
  const below = belowFloor(facts.counts, floor)
  return below.length === 0
    ? { check: "not-older-than-last-verified", ok: true }
    : { check: "not-older-than-last-verified", ok: false, detail: `fewer rows than the last verified backup: ${nameList(below)}` }
}

/** No append-only table of the backup has more rows than live. */
export const notAheadOfLive = (backup: Counts, live: Counts): Check => {
  const ahead = Object.keys(backup).sort().filter((t) => (backup[t] ?? 0) > (live[t] ?? 0))
    .map((t) => `${t} ${backup[t]} > ${live[t] ?? 0}`)
  return ahead.length === 0
    ? { check: "not-ahead-of-live", ok: true }
    : { check: "not-ahead-of-live", ok: false, detail: `the backup has more rows than live: ${nameList(ahead)}` }
}

/** The live file holds at least the rule versions ops.sqlite remembers (D63, invariant 7). */
export const versionsRemembered = (facts: FileFacts, remembered: number | null): Check => {
  const have = facts.counts.rule_version ?? 0
  if (remembered === null) return { check: "versions-remembered", ok: false, detail: "no backup_state row for this scope" }
  return have >= remembered
    ? { check: "versions-remembered", ok: true, detail: `${have} ≥ ${remembered}` }
    : { check: "versions-remembered", ok: false, detail: `${have} rule versions, ops.sqlite remembers ${remembered}` }
}

/**
 * The restored scope file has at least the version_count the restored ops.sqlite remembers for
 * it, so restoring both never locks the scope (§11.2 step 3).
 */
export const pairConsistent = (facts: FileFacts, ops: FileFacts | null, scope: string): Check => {
  if (ops === null) return { check: "pair-consistent", ok: false, detail: "the ops.sqlite backup could not be read" }
  const remembered = ops.remembered?.[scope]
  const have = facts.counts.rule_version ?? 0
  if (remembered === undefined) {
    return { check: "pair-consistent", ok: true, detail: "the ops.sqlite backup has no backup_state row for this scope" }
  }
  return have >= remembered
    ? { check: "pair-consistent", ok: true, detail: `${have} ≥ ${remembered}` }
    : { check: "pair-consistent", ok: false, detail: `${have} rule versions, the ops.sqlite backup remembers ${remembered}: restoring both would lock the scope` }
}

/**
 * export-hashes (§11 "Backup verify" step 2): the SHA-256 of every rules/<id>.md of the backup's
 * and the live export are compared. A rule may differ only if its newest changed_at / decided_at
 * in live is after the backup's newest one: it is named in exceptions; every other difference
 * (also a rule the backup has and live has not) fails and is named.
 */
export const exportHashes = (backup: RuleDigest, live: RuleDigest): { readonly check: Check; readonly exceptions: ReadonlyArray<string> } => {
  const ids = [...new Set([...Object.keys(backup.hashes), ...Object.keys(live.hashes)])].sort()
  const exceptions: Array<string> = []
  const failed: Array<string> = []
  for (const id of ids) {
    if (backup.hashes[id] === live.hashes[id]) continue
    const changed = live.newest[id]
    const after = changed !== undefined && id in live.hashes && (backup.latest === null || changed > backup.latest)
    if (after) exceptions.push(id)
    else failed.push(id)
  }
  const check: Check = failed.length === 0
    ? { check: "export-hashes", ok: true, detail: `${ids.length} rules compared, ${exceptions.length} changed after the backup` }
    : { check: "export-hashes", ok: false, detail: `differs from live without a later change: ${nameList(failed)}` }
  return { check, exceptions }
}

/** A check that stands for a failed read: `code` is SQLite's. */
export const unreadable = (check: string, what: string, code: string): Check => ({ check, ok: false, detail: `${what} unreadable: ${code}` })

export const allOk = (checks: ReadonlyArray<Check>): boolean => checks.every((c) => c.ok)
