/**
 * Scope file, migration 0003: the lexical tables of stage a (architecture.md §4.1, the same SQL
 * as src/search/lexical/schema.ts). lex_meta starts without a build, so the first search or write
 * on a file with rules rebuilds the tables from current_version. lex_relation (the same-relation
 * index) is one of them (docs/decisions.md, "Search performance").
 */
import { LEX_RELATION_SCHEMA, LEX_SCHEMA } from "../../../search/lexical/schema.js"
import type { Migration } from "../types.js"

export const migration: Migration = {
  version: 3,
  name: "0003-lexical",
  statements: () => [...LEX_SCHEMA, ...LEX_RELATION_SCHEMA]
}
