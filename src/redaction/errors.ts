/** Failures of the redaction core that are not answers of the contract. */
import { Data } from "effect"

/**
 * A stored redaction cannot be replayed on this file: a place's row is missing, its text is not
 * there, its ranges do not fit the text, or the redaction's seq is not the file's next one. The
 * ledger locks the scope on it (gaps.md §12 "Nothing comes back").
 */
export class PlacesDoNotFit extends Data.TaggedError("PlacesDoNotFit")<{
  readonly redaction: string
  readonly reason: string
}> {}
