/**
 * The CLI's route table (architecture.md §2 AT6): the only way the CLI builds an HTTP request.
 * Ops routes go over the ops socket; api routes to GROUNDNOTE_URL with the api credential; it
 * holds no approval-channel route except GET /v1/export/:scope (the export needs a person's
 * Access token for the approval audience). There is no route that confirms, rejects, revokes,
 * reviews, archives, reverts or redacts.
 */

export type CliChannel = "ops" | "api" | "approval"
export type CliMethod = "GET" | "POST"

export interface CliRoute {
  readonly channel: CliChannel
  readonly method: CliMethod
  /** path template; `:name` segments are filled by buildPath */
  readonly path: string
  readonly description: string
  /** the query parameters the route takes (buildPath refuses others) */
  readonly query?: ReadonlyArray<string>
}

export const CLI_ROUTES = {
  // the ops socket
  opsStatus: { channel: "ops", method: "GET", path: "/ops/status", description: "service, backup and scope status" },
  opsDigest: { channel: "ops", method: "GET", path: "/ops/digest", description: "what the policy adopted, what waits, what is due for recheck", query: ["since"] },
  grantsList: { channel: "ops", method: "GET", path: "/ops/grants", description: "every grant, newest last" },
  grantsCreate: { channel: "ops", method: "POST", path: "/ops/grants", description: "create a grant (a bearer token is shown once)" },
  grantsDisable: { channel: "ops", method: "POST", path: "/ops/grants/:id/disable", description: "disable a grant" },
  grantsRename: { channel: "ops", method: "POST", path: "/ops/grants/:id/rename", description: "give a grant a new label (new row)" },
  scopesCreate: { channel: "ops", method: "POST", path: "/ops/scopes", description: "create the file of a configured scope" },
  keysList: { channel: "ops", method: "GET", path: "/ops/keys", description: "every recipient of encrypted copies (never an identity)" },
  keysAdd: { channel: "ops", method: "POST", path: "/ops/keys", description: "a recipient for a scope's or the instance's copies" },
  keysRotate: { channel: "ops", method: "POST", path: "/ops/keys/rotate", description: "a new key pair's recipient; the created ones retire" },
  backupRun: { channel: "ops", method: "POST", path: "/ops/backup/run", description: "copy ops.sqlite and every scope (kind copy)" },
  backupProbe: { channel: "ops", method: "POST", path: "/ops/backup/probe", description: "restore drill of the newest backup, nightly export" },
  backupVerify: { channel: "ops", method: "POST", path: "/ops/backup/verify", description: "check live and the newest backup" },

  // the public listener, api channel
  apiStatus: { channel: "api", method: "GET", path: "/v1/status", description: "the grant and its scopes with rule counts" },
  sourcesPut: { channel: "api", method: "POST", path: "/v1/sources", description: "store a source (meeting, mail)" },
  sourcesGet: { channel: "api", method: "GET", path: "/v1/sources/:id", description: "read back a stored source", query: ["scope", "include"] },
  search: { channel: "api", method: "POST", path: "/v1/search", description: "search rules" },
  feedback: { channel: "api", method: "POST", path: "/v1/search/:search_id/feedback", description: "verdicts on a search's bundles" },
  rulesList: { channel: "api", method: "GET", path: "/v1/rules", description: "the rules of a scope", query: ["scope", "status", "relation", "limit", "after"] },
  rulesGet: { channel: "api", method: "GET", path: "/v1/rules/:id", description: "one rule as a bundle", query: ["as_of", "include_proposals"] },
  rulesVersions: { channel: "api", method: "GET", path: "/v1/rules/:id/versions", description: "every version and decision of a rule" },
  rulesRetract: { channel: "api", method: "POST", path: "/v1/rules/:id/retract", description: "take back the policy's adoption of a rule" },
  rulesProvenance: { channel: "api", method: "GET", path: "/v1/rules/:id/provenance", description: "where a rule comes from" },
  proposalsList: { channel: "api", method: "GET", path: "/v1/proposals", description: "open proposals of a scope", query: ["scope", "limit", "after"] },
  propose: { channel: "api", method: "POST", path: "/v1/proposals", description: "propose a rule with its quote" },
  structureList: { channel: "api", method: "GET", path: "/v1/structure", description: "pending structure changes of a scope", query: ["scope"] },

  // the approval channel: the export only (AT6)
  exportScope: { channel: "approval", method: "GET", path: "/v1/export/:scope", description: "the scope's Markdown export (.tar.gz)" }
} as const satisfies Record<string, CliRoute>

export type CliRouteName = keyof typeof CLI_ROUTES

/** The names of a template's `:name` segments. */
export const pathParams = (template: string): Array<string> =>
  template.split("/").filter((s) => s.startsWith(":")).map((s) => s.slice(1))

/**
 * Fills `:name` segments with their URI-encoded values and appends the query (undefined values
 * left out); a missing or extra parameter, or a query name the route does not take, throws.
 */
export const buildPath = (
  route: CliRoute,
  params: Readonly<Record<string, string>> = {},
  query: Readonly<Record<string, string | undefined>> = {}
): string => {
  const names = pathParams(route.path)
  for (const key of Object.keys(params)) {
    if (!names.includes(key)) throw new Error(`route ${route.method} ${route.path} has no parameter ${key}`)
  }
  const path = route.path
    .split("/")
    .map((segment) => {
      if (!segment.startsWith(":")) return segment
      const value = params[segment.slice(1)]
      if (value === undefined || value === "") throw new Error(`route ${route.method} ${route.path} needs ${segment}`)
      return encodeURIComponent(value)
    })
    .join("/")
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue
    if (!(route.query ?? []).includes(key)) throw new Error(`route ${route.method} ${route.path} takes no query parameter ${key}`)
    search.append(key, value)
  }
  const qs = search.toString()
  return qs === "" ? path : `${path}?${qs}`
}
