/**
 * The human form of the ops answers (status, grants), without Effect: the parsed commands
 * (cli-commands.ts) and the quick ones (cli-quick.ts) print the same lines.
 */
import type { GrantOut } from "../contracts/grants.js"
import { usdAmount } from "../contracts/usd.js"
import { plural } from "../contracts/words.js"
import { terminalSafe } from "./cli-text.js"

interface RunView { readonly seq: number; readonly kind: string; readonly finished_at: string; readonly ok: boolean }
interface ScopeView {
  readonly scope: string; readonly created: boolean; readonly locked: boolean; readonly lock_reason: string | null
  readonly version_count: number | null; readonly last_backup_at: string | null; readonly verified_at: string | null
  readonly verify_ok: boolean | null; readonly probed_at: string | null; readonly probe_ok: boolean | null
  readonly exported_at: string | null
}
export interface StatusView {
  readonly instance: string; readonly version: string; readonly started_at: string; readonly now: string; readonly data_dir: string
  readonly backup: {
    readonly kind: string; readonly directory: string | null; readonly export_directory: string | null
    readonly running: string | null; readonly ops_backup_at: string | null
    readonly last_run: RunView | null; readonly last_probe: RunView | null
  }
  readonly scopes: ReadonlyArray<ScopeView>
  /** stage b: the model's state and the vectors' catch-up per scope (null when stage b is off) */
  readonly semantic?: {
    readonly model: string; readonly state: string; readonly reason: string | null
    readonly scopes: ReadonlyArray<{ readonly scope: string; readonly state: string; readonly total: number | null; readonly embedded: number | null; readonly pending: number | null }>
  } | null
  readonly usage?: { readonly reranker_month_usd: number }
}

const when = (at: string | null): string => at ?? "never"
const run = (r: RunView | null): string => (r === null ? "never" : `${r.finished_at} (${r.ok ? "ok" : "FAILED"}, #${r.seq})`)
const check = (at: string | null, ok: boolean | null): string => (at === null ? "never" : `${at} (${ok === true ? "ok" : "FAILED"})`)

export const renderStatus = (s: StatusView): string => {
  const lines = [
    `groundnote ${s.version}, instance ${s.instance}, running since ${s.started_at} (now ${s.now})`,
    `data dir: ${s.data_dir}`,
    `backup: ${s.backup.kind}${s.backup.directory === null ? "" : ` to ${s.backup.directory}`}` +
      `${s.backup.export_directory === null ? ", no nightly export" : `, exports to ${s.backup.export_directory}`}` +
      `${s.backup.running === null ? "" : `, ${s.backup.running} running now`}`,
    `  ops.sqlite copied: ${when(s.backup.ops_backup_at)}; last run: ${run(s.backup.last_run)}; last probe: ${run(s.backup.last_probe)}`,
    "scopes:"
  ]
  for (const sc of s.scopes) {
    if (!sc.created && !sc.locked) {
      lines.push(`  ${sc.scope}: no file yet (groundnote scope create ${sc.scope})`)
      continue
    }
    const state = sc.locked ? `LOCKED (${sc.lock_reason ?? "see the process log"})` : "ok"
    lines.push(`  ${sc.scope}: ${state}, ${sc.version_count === null ? "? rule versions" : plural(sc.version_count, "rule version")} remembered; backup ${when(sc.last_backup_at)}; ` +
      `verify ${check(sc.verified_at, sc.verify_ok)}; probe ${check(sc.probed_at, sc.probe_ok)}; export ${when(sc.exported_at)}`)
  }
  const sem = s.semantic
  if (sem !== undefined && sem !== null) {
    lines.push(`stage b: model ${sem.model} ${sem.state}${sem.reason === null ? "" : ` (${sem.reason})`}`)
    for (const v of sem.scopes) {
      // the catch-up has not counted this scope yet (waiting for the model): no figures to show
      const counted = v.total === null || v.embedded === null ? "rule versions not counted yet"
        : `${v.embedded} of ${plural(v.total, "rule version")} embedded${v.pending !== null && v.pending > 0 ? `, ${v.pending} pending` : ""}`
      lines.push(`  ${v.scope}: ${counted} (${v.state})`)
    }
  }
  if (s.usage !== undefined && s.usage.reranker_month_usd > 0) lines.push(`stage c: ${usdAmount(s.usage.reranker_month_usd)} USD spent this month`)
  return lines.map((l) => terminalSafe(l)).join("\n")
}

export const renderGrant = (g: GrantOut): string =>
  terminalSafe([
    g.id,
    g.active ? "active" : `disabled ${g.disabled_at ?? ""}`.trim(),
    `${g.kind}/${g.auth}`,
    g.identity ?? g.fingerprint ?? "",
    `scopes=${g.scopes.join(",")}`,
    `rights=${g.rights.join(",")}`,
    g.label === null ? "" : `label=${JSON.stringify(g.label)}`,
    `created ${g.created_at}`
  ].filter((p) => p !== "").join("  "))

/** The answer of grants list, one grant a line. */
export const renderGrants = (grants: ReadonlyArray<GrantOut>): string => grants.length === 0 ? "no grants" : grants.map(renderGrant).join("\n")
