/**
 * Scope file, migration 0004: lex_relation, the derived relation index of the same-relation group
 * (the same SQL as LEX_RELATION_SCHEMA in src/search/lexical/schema.ts). It drops lex_meta.build,
 * so the first search or write on a file with rules rebuilds every lexical table, lex_relation
 * included, in one transaction (architecture.md §4.1).
 */
import { LEX_RELATION_SCHEMA } from "../../../search/lexical/schema.js"
import type { Migration } from "../types.js"

export const migration: Migration = {
  version: 4,
  name: "0004-relation-index",
  statements: () => [...LEX_RELATION_SCHEMA, `DELETE FROM lex_meta WHERE key = 'build'`]
}
