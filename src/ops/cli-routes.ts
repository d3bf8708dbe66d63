/**
 * The CLI's route table (architecture.md §2 AT6): the only way the CLI builds an HTTP request.
 * It holds no approval-channel route except GET /v1/export/:scope (none yet: ops routes only).
 */

export type CliChannel = "ops"
export type CliMethod = "GET" | "POST"

export interface CliRoute {
  readonly channel: CliChannel
  readonly method: CliMethod
  /** path template; `:name` segments are filled by buildPath */
  readonly path: string
  readonly description: string
}

export const CLI_ROUTES = {
  opsStatus: { channel: "ops", method: "GET", path: "/ops/status", description: "service, backup and scope status" },
  grantsList: { channel: "ops", method: "GET", path: "/ops/grants", description: "every grant, newest last" },
  grantsCreate: { channel: "ops", method: "POST", path: "/ops/grants", description: "create a grant (a bearer token is shown once)" },
  grantsDisable: { channel: "ops", method: "POST", path: "/ops/grants/:id/disable", description: "disable a grant" },
  grantsRename: { channel: "ops", method: "POST", path: "/ops/grants/:id/rename", description: "give a grant a new label (new row)" },
  scopesCreate: { channel: "ops", method: "POST", path: "/ops/scopes", description: "create the file of a configured scope" }
} as const satisfies Record<string, CliRoute>

export type CliRouteName = keyof typeof CLI_ROUTES

/** The names of a template's `:name` segments. */
export const pathParams = (template: string): Array<string> =>
  template.split("/").filter((s) => s.startsWith(":")).map((s) => s.slice(1))

/** Fills `:name` segments with their URI-encoded values; a missing or extra value throws. */
export const buildPath = (route: CliRoute, params: Readonly<Record<string, string>> = {}): string => {
  const names = pathParams(route.path)
  for (const key of Object.keys(params)) {
    if (!names.includes(key)) throw new Error(`route ${route.method} ${route.path} has no parameter ${key}`)
  }
  return route.path
    .split("/")
    .map((segment) => {
      if (!segment.startsWith(":")) return segment
      const value = params[segment.slice(1)]
      if (value === undefined || value === "") throw new Error(`route ${route.method} ${route.path} needs ${segment}`)
      return encodeURIComponent(value)
    })
    .join("/")
}
