/**
 * Failures of stage b. None of them is an error of a search: the stage turns them into
 * `{ state: "failed", reason }` and stage a answers alone (architecture.md §7.8).
 *
 * `reason` is one of the fixed texts of STAGE_B_REASONS (it reaches /v1 responses and MCP results,
 * so it names no path and no text); `detail` says what exactly is wrong, with paths, for
 * `groundnote doctor` (finding semantic-model) and the process log — never for /v1.
 */
import { Data } from "effect"

export const STAGE_B_REASONS = {
  missing: "semantic model files missing",
  broken: "semantic model cannot be loaded",
  timeout: "embedding timed out",
  failed: "embedding failed",
  /** the model is still opening (a few seconds after the service starts) */
  loading: "semantic model is loading",
  /** the scope's vectors are being read into memory (once per scope and process) */
  vectorsLoading: "semantic vectors are loading"
} as const
export type StageBReason = (typeof STAGE_B_REASONS)[keyof typeof STAGE_B_REASONS]

/** The model of model_dir/<model>/ cannot be used: files missing, unreadable or not runnable. */
export class SemanticModelUnavailable extends Data.TaggedError("SemanticModelUnavailable")<{
  readonly model: string
  readonly reason: typeof STAGE_B_REASONS.missing | typeof STAGE_B_REASONS.broken
  readonly detail: string
}> {}

/** One embedding call did not produce vectors: it timed out, or the model run failed. */
export class EmbedFailed extends Data.TaggedError("EmbedFailed")<{
  readonly reason: typeof STAGE_B_REASONS.timeout | typeof STAGE_B_REASONS.failed
  readonly detail: string
}> {}
