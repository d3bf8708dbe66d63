/** A numbered migration: statements applied in one transaction (architecture.md §4). */
export interface Statement {
  readonly sql: string
  readonly params?: ReadonlyArray<string | number | null>
}

export interface MigrationContext {
  /** scope files: the scope name written into meta.scope by 0001 */
  readonly scope: string | null
  /** UTC instant of the run */
  readonly now: string
}

export interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: (ctx: MigrationContext) => ReadonlyArray<string | Statement>
  /**
   * A query answering one row with n > 0 once this migration was applied. Only a migration that
   * was numbered below one that shipped before it has one: the runner applies it to a file whose
   * schema_version is already higher when the query says it is missing (docs/decisions.md, §4 Storage).
   */
  readonly presentIf?: string
}

/** The two append-only triggers of one table (invariant 1). */
export const appendOnlyPair = (table: string): ReadonlyArray<string> => [
  `CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table} BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
  `CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table} BEGIN SELECT RAISE(ABORT, 'append-only'); END`
]

export const INSTANT_GLOB = "'????-??-??T??:??:??*Z'"
