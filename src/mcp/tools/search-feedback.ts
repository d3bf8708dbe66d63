/**
 * search_feedback {search_id, bundles, missing}: the same recordFeedback() and pipeline as
 * POST /v1/search/:search_id/feedback (feedbackSpec). An unknown or foreign search id is
 * not-found, the same answer for both.
 */
import { FeedbackInput } from "../../domain/search-schemas.js"
import { feedback } from "../../operations/search.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const SEARCH_FEEDBACK_DESCRIPTION =
  "Tell Groundnote how a search_rules answer helped: each bundle relevant or irrelevant, and rules it should have " +
  "found (missing). Pass the search_id of that answer. It improves search and changes no rule."

export const searchFeedback: ToolSpec<typeof FeedbackInput.Encoded, typeof feedback.input.Type, Services> = {
  name: "search_feedback",
  title: "Feedback on a search",
  description: SEARCH_FEEDBACK_DESCRIPTION,
  kind: "core",
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  op: feedback,
  args: FeedbackInput
}
