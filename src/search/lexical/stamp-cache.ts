/**
 * The per-connection cache of what only writes change, valid for one stamp of the
 * scope file: index_stamp (seq, nonce; bumped by triggers on lex_doc in the writer's transaction)
 * and lex_meta.build, read when a search begins (refreshStampCache, inside the search's read
 * transaction, so the stamp belongs to the rows the search reads). A different stamp — a write of
 * this process or of another one, a rebuild, a restored file — starts an empty cache. Each user
 * (the vocabulary in vocab.ts, the phrase rows in phrases.ts) keeps its own part under a name.
 * Content parts (boundedContentPart: a scope's held answers) are valid for the content stamp too
 * (content_stamp, migration 0007: bumped by every write of the tables an answer reads), read in
 * the same statement; they start empty when either stamp differs.
 * A connection without a cache (forgetStampCache) reads everything from the file.
 *
 * A write of one rule's lexical rows (index.ts reindexRule) notes which tokens and rows it changed
 * between the stamp before and after it (noteIndexChange), on this thread and, through a BroadcastChannel,
 * on the others of the process (the read pool's workers, the redaction's apply thread). A cache
 * whose stamp leads by noted changes to the file's stamp is carried: each part with a carrier
 * (carryPart: the vocabulary, each word's analysis, the phrase rows, the explained rows) keeps
 * what those changes cannot have changed or brings it up to date; every other part starts empty.
 * Without the chain of notes (another process, a rebuild, a note not arrived yet) the cache
 * starts empty as before.
 */
import { BroadcastChannel } from "node:worker_threads"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { rowsOf } from "../../db/held-connection.js"

interface StampCache {
  readonly stamp: string
  readonly parts: Map<string, unknown>
  /** content_stamp's seq and nonce when contentParts began */
  content: string
  contentParts: Map<string, unknown>
}

const caches = new WeakMap<SqlClient, StampCache>()

/** The folded tokens one change of the lexical index touched in lex_word and lex_stem, before and after it. */
export interface IndexChange {
  readonly words: ReadonlyArray<string>
  readonly stems: ReadonlyArray<string>
  /** the seqs (rowids) whose rows the change rewrote in every lexical table; absent: not known */
  readonly seqs?: ReadonlyArray<number>
  /** how many indexed rules (lex_doc rows) the change added, negative for removed; absent: not known */
  readonly docs?: number
  /**
   * Where the one rewritten seq's row held each of `words` and `stems`, a character each in their
   * order: "0" before the change only, "1" after it only, "2" both; absent: not known
   */
  readonly row?: { readonly words: string; readonly stems: string }
}

/** The tables a note names tokens of. */
export type NotedTable = "lex_word" | "lex_stem"

/** A rewritten row's tokens in one table before and after the changes. */
export interface RowTokens {
  readonly before: ReadonlySet<string>
  readonly after: ReadonlySet<string>
}

/** A note's tokens as sets, per table: made once per note on this thread, when a cache is first carried through it (noteTokens). */
interface NoteTokens {
  /** the tokens the change touched, before or after it (the note's words, its stems) */
  readonly touched: Readonly<Record<NotedTable, ReadonlySet<string>>>
  /** the one rewritten seq and its row's tokens; undefined when the note does not tell them */
  readonly row: { readonly seq: number; readonly tokens: Readonly<Record<NotedTable, RowTokens>> } | undefined
}

interface Note {
  readonly to: string
  readonly change: IndexChange
}

/**
 * The tokens of the notes caches were carried through last, by note: the other connections of
 * the thread are carried through the same notes; the oldest made go past MAX_NOTE_TOKENS (a note's
 * sets are as large as its rows, and most notes are carried through once per connection).
 */
const noteTokens = new Map<Note, NoteTokens>()
const MAX_NOTE_TOKENS = 64

/** The note's tokens as sets, made on its first use and kept while it is among the last MAX_NOTE_TOKENS made. */
const tokensOfNote = (note: Note): NoteTokens => {
  const known = noteTokens.get(note)
  if (known !== undefined) return known
  const c = note.change
  const seq = c.seqs?.length === 1 ? c.seqs[0] : undefined
  /** the row's tokens (`where`: "0" before only, "1" after only, "2" both) before the change and after it */
  const rowOf = (tokens: ReadonlyArray<string>, where: string): RowTokens | undefined =>
    where.length !== tokens.length ? undefined : {
      before: new Set(tokens.filter((_, i) => where[i] === "0" || where[i] === "2")),
      after: new Set(tokens.filter((_, i) => where[i] === "1" || where[i] === "2"))
    }
  const word = seq === undefined || c.row === undefined ? undefined : rowOf(c.words, c.row.words)
  const stem = seq === undefined || c.row === undefined ? undefined : rowOf(c.stems, c.row.stems)
  const made: NoteTokens = {
    touched: { lex_word: new Set(c.words), lex_stem: new Set(c.stems) },
    row: seq === undefined || word === undefined || stem === undefined ? undefined : { seq, tokens: { lex_word: word, lex_stem: stem } }
  }
  noteTokens.set(note, made)
  if (noteTokens.size > MAX_NOTE_TOKENS) {
    const oldest = noteTokens.keys().next().value
    if (oldest !== undefined) noteTokens.delete(oldest)
  }
  return made
}

/** Noted changes by the index stamp they start from; the oldest go past MAX_NOTES. */
const notes = new Map<string, Note>()
const MAX_NOTES = 4_096
/** the longest chain of notes a cache is carried along */
const MAX_HOPS = 256
const CHANNEL = "groundnote-index-changes"
let channel: BroadcastChannel | undefined

const remember = (from: string, note: Note): void => {
  notes.delete(from)
  notes.set(from, note)
  if (notes.size > MAX_NOTES) {
    const oldest = notes.keys().next().value
    if (oldest !== undefined) notes.delete(oldest)
  }
}

/** This thread's end of the channel (opened on first use; it keeps no thread alive). */
const channelOf = (): BroadcastChannel => {
  if (channel === undefined) {
    const c = new BroadcastChannel(CHANNEL)
    c.unref()
    c.onmessage = (m: unknown) => {
      const d = (m as { readonly data?: { readonly from?: unknown; readonly to?: unknown; readonly change?: IndexChange } }).data
      if (typeof d?.from === "string" && typeof d.to === "string" && d.change !== undefined) remember(d.from, { to: d.to, change: d.change })
    }
    channel = c
  }
  return channel
}

/**
 * A committed or uncommitted write moved the index stamp from `from` to `to` (stampOfIndex) and
 * changed only the rows of `change`'s tokens. A rolled-back write's `to` never shows in the file
 * (its nonce is new), so its note is never followed.
 */
export const noteIndexChange = (from: string, to: string, change: IndexChange): void => {
  remember(from, { to, change })
  channelOf().postMessage({ from, to, change })
}

/**
 * A chain of noted changes as the carriers take it: the changes in their order, and their tokens
 * as sets per table — made once for every carrier of every cache carried through them (each
 * note's on its first use, the chain's on the carriers' first ask).
 */
export interface CarriedChanges {
  readonly changes: ReadonlyArray<IndexChange>
  /** every token the changes touched per table, before or after them */
  readonly touched: () => Readonly<Record<NotedTable, ReadonlySet<string>>>
  /**
   * Each rewritten seq's row per table before the first change and after the last; undefined when
   * a change does not tell its row (its one seq and where the row held each token)
   */
  readonly rows: () => Readonly<Record<NotedTable, ReadonlyMap<number, RowTokens>>> | undefined
}

/** The chain of `notes` as the carriers take it. */
const carriedChanges = (notes: ReadonlyArray<Note>): CarriedChanges => {
  let touched: Record<NotedTable, ReadonlySet<string>> | undefined
  let rows: Record<NotedTable, ReadonlyMap<number, RowTokens>> | undefined | null = null
  return {
    changes: notes.map((n) => n.change),
    touched: () => {
      if (touched !== undefined) return touched
      const only = notes.length === 1 ? notes[0] : undefined
      if (only !== undefined) touched = tokensOfNote(only).touched
      else {
        const union = { lex_word: new Set<string>(), lex_stem: new Set<string>() }
        for (const n of notes) {
          const t = tokensOfNote(n).touched
          for (const w of t.lex_word) union.lex_word.add(w)
          for (const w of t.lex_stem) union.lex_stem.add(w)
        }
        touched = union
      }
      return touched
    },
    rows: () => {
      if (rows !== null) return rows
      const out = { lex_word: new Map<number, RowTokens>(), lex_stem: new Map<number, RowTokens>() }
      rows = out
      for (const n of notes) {
        const row = tokensOfNote(n).row
        if (row === undefined) {
          rows = undefined
          break
        }
        for (const table of ["lex_word", "lex_stem"] as const) {
          const known = out[table].get(row.seq)
          const now = row.tokens[table]
          out[table].set(row.seq, known === undefined ? now : { before: known.before, after: now.after })
        }
      }
      return rows
    }
  }
}

/** Every start of the strings (the empty one too): `p` is in it exactly when one of them startsWith(p). */
export const startsOf = (set: ReadonlySet<string>): Set<string> => {
  const out = new Set<string>(set.size > 0 ? [""] : [])
  for (const w of set) for (let k = 1; k <= w.length; k++) out.add(w.slice(0, k))
  return out
}

/**
 * startsOf a set of noted tokens (CarriedChanges' touched sets, a rewritten row's tokens), made
 * once per set: a note's sets serve every cache carried through it.
 */
const notedStarts = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>()
export const startsOfNoted = (tokens: ReadonlySet<string>): ReadonlySet<string> => {
  let starts = notedStarts.get(tokens)
  if (starts === undefined) {
    starts = startsOf(tokens)
    notedStarts.set(tokens, starts)
  }
  return starts
}

/** How a part of the cache is kept through noted changes: what is left of it, or undefined to start it empty. */
export type Carrier = (part: unknown, carried: CarriedChanges) => unknown

const carriers = new Map<string, Carrier>()

/** Registers the carrier of the part `name` (each user of a part that can be kept registers its own). */
export const carryPart = (name: string, carrier: Carrier): void => {
  carriers.set(name, carrier)
}

/** The parts of `c` carried to the stamp `to` along the noted changes; undefined without a chain. */
const carried = (c: StampCache, to: string): Map<string, unknown> | undefined => {
  const chain: Array<Note> = []
  let at = c.stamp
  for (let hop = 0; at !== to; hop++) {
    const note = notes.get(at)
    if (note === undefined || hop >= MAX_HOPS) return undefined
    chain.push(note)
    at = note.to
  }
  const changes = carriedChanges(chain)
  const parts = new Map<string, unknown>()
  for (const [name, part] of c.parts) {
    const carrier = carriers.get(name)
    const kept = carrier === undefined ? undefined : carrier(part, changes)
    if (kept !== undefined) parts.set(name, kept)
  }
  return parts
}

interface Stamps {
  /** index_stamp's seq and nonce and lex_meta.build */
  readonly stamp: string
  /** content_stamp's seq and nonce */
  readonly content: string
}

/** Both stamps of the file as the connection sees them now; undefined for a file without index_stamp's row. */
const readStamps = (sql: SqlClient): Effect.Effect<Stamps | undefined, SqlError> =>
  Effect.map(
    rowsOf(
      sql,
      sql<{ seq: number; nonce: number | bigint; build: string | null; content: string | null }>`SELECT seq, nonce,
      (SELECT value FROM lex_meta WHERE key = 'build') AS build,
      (SELECT seq || ':' || nonce FROM content_stamp WHERE id = 1) AS content FROM index_stamp WHERE id = 1`
    ),
    (rows) => {
      const r = rows[0]
      return r === undefined ? undefined : { stamp: `${String(r.seq)}:${String(r.nonce)}:${r.build ?? ""}`, content: r.content ?? "" }
    }
  )

const joined = (s: Stamps): string => `${s.stamp}|${s.content}`

/** The index stamp of the file (seq, nonce, build) as the carried notes name it; undefined for a file without it. */
export const readIndexStamp = (sql: SqlClient): Effect.Effect<string | undefined, SqlError> =>
  Effect.map(readStamps(sql), (s) => s?.stamp)

/** The seq of an index stamp string (readIndexStamp). */
export const seqOfIndexStamp = (stamp: string): number => Number(stamp.slice(0, stamp.indexOf(":")))

/** The build of an index stamp string (readIndexStamp). */
export const buildOfIndexStamp = (stamp: string): string => stamp.slice(stamp.indexOf(":", stamp.indexOf(":") + 1) + 1)

/** Both stamps of the file as one string (compare with stampOf); undefined for a file without them. */
export const readStamp = (sql: SqlClient): Effect.Effect<string | undefined, SqlError> =>
  Effect.map(readStamps(sql), (s) => (s === undefined ? undefined : joined(s)))

/**
 * Both stamps the connection's cache holds now, as readStamp gives them: what an answer read in the
 * transaction that refreshed them belongs to; undefined without a cache.
 */
export const stampOf = (sql: SqlClient): string | undefined => {
  const c = caches.get(sql)
  return c === undefined ? undefined : joined(c)
}

/**
 * Reads the file's stamp and keeps the connection's cache when it was filled under the same
 * stamp, else starts an empty one.
 */
export const refreshStampCache = (sql: SqlClient): Effect.Effect<void, SqlError> =>
  Effect.map(readStamps(sql), (read) => {
    if (read === undefined) {
      caches.delete(sql)
      return
    }
    const c = caches.get(sql)
    if (c?.stamp !== read.stamp) {
      channelOf()
      const parts = c === undefined ? undefined : carried(c, read.stamp)
      caches.set(sql, { stamp: read.stamp, parts: parts ?? new Map(), content: read.content, contentParts: new Map() })
    }
    else if (c.content !== read.content) {
      c.content = read.content
      c.contentParts = new Map()
    }
  })

/** Drops the connection's cache: every read goes to the file until refreshStampCache. */
export const forgetStampCache = (sql: SqlClient): void => {
  caches.delete(sql)
}

const partIn = <T>(parts: Map<string, unknown> | undefined, name: string, make: () => T): T | undefined => {
  if (parts === undefined) return undefined
  const known = parts.get(name) as T | undefined
  if (known !== undefined) return known
  const made = make()
  parts.set(name, made)
  return made
}

const boundedIn = <T>(parts: Map<string, unknown> | undefined, name: string, make: () => T, size: (part: T) => number, max: number): T | undefined => {
  const part = partIn(parts, name, make)
  if (part === undefined || size(part) <= max) return part
  parts?.delete(name)
  return partIn(parts, name, make)
}

/** The part `name` of the connection's cache (made on first use); undefined without a cache. */
export const cachePart = <T>(sql: SqlClient, name: string, make: () => T): T | undefined => partIn(caches.get(sql)?.parts, name, make)

/**
 * The part `name` as cachePart gives it, started again (empty) once `size` of it has passed `max`:
 * each user bounds what it keeps so.
 */
export const boundedPart = <T>(sql: SqlClient, name: string, make: () => T, size: (part: T) => number, max: number): T | undefined =>
  boundedIn(caches.get(sql)?.parts, name, make, size, max)

/** boundedPart of the content parts: valid for the content stamp as well (emptied when either stamp differs). */
export const boundedContentPart = <T>(sql: SqlClient, name: string, make: () => T, size: (part: T) => number, max: number): T | undefined =>
  boundedIn(caches.get(sql)?.contentParts, name, make, size, max)
