/**
 * groundnote doctor (gaps.md §9): every finding of DoctorInput in a fixed order, and the exit code
 * (3 when any finding fails). Gathering the input is facts.ts; showing it is render.ts.
 */
import * as F from "./findings.js"
import type { DoctorInput, Finding, FindingId } from "./types.js"

const FINDINGS: ReadonlyArray<readonly [FindingId, (input: DoctorInput) => Finding]> = [
  ["config-valid", F.configValid],
  ["secrets-present", F.secretsPresent],
  ["secrets-distinct", F.secretsDistinct],
  ["data-dir-permissions", F.dataDirPermissions],
  ["at-rest", F.atRest],
  ["secure-delete", F.secureDelete],
  ["ops-socket", F.opsSocket],
  ["service-version", F.serviceVersion],
  ["scopes-unlocked", F.scopesUnlocked],
  ["backup-age", F.backupAge],
  ["probe-age", F.probeAge],
  ["verify-result", F.verifyResult],
  ["redaction-ledger", F.redactionLedger],
  ["litestream-binary", F.litestreamBinary],
  ["scope-keys", F.scopeKeys],
  ["copies-encrypted", F.copiesEncrypted],
  ["key-identity", F.keyIdentity],
  ["lexicon", F.lexicon],
  ["semantic-model", F.semanticModel],
  ["reranker-key", F.rerankerKey],
  ["reranker-budget", F.rerankerBudget],
  ["clock-skew", F.clockSkew]
]

/** Every finding, in FINDING_IDS order. */
export const runDoctor = (input: DoctorInput): ReadonlyArray<Finding> => FINDINGS.map(([, f]) => f(input))

/** 3 when any finding fails, else 0 (D98). */
export const doctorExitCode = (findings: ReadonlyArray<Finding>): 0 | 3 => (findings.some((f) => f.status === "fail") ? 3 : 0)

export { FINDINGS }
export type { DoctorInput, Finding } from "./types.js"
