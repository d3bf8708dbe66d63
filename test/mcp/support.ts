/** An MCP client (the official SDK Client over Streamable HTTP) against a test server's /mcp. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"

export interface Mcp {
  readonly client: Client
  readonly call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>
  readonly close: () => Promise<void>
}

/** Connects with `headers` (e.g. a bearer) and remembers every tool result for the scan. */
export const connect = async (url: string, headers: Record<string, string>, seen?: Array<CallToolResult>): Promise<Mcp> => {
  const client = new Client({ name: "groundnote-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } })
  await client.connect(transport)
  return {
    client,
    call: async (name, args) => {
      const r = (await client.callTool({ name, arguments: args })) as CallToolResult
      seen?.push(r)
      return r
    },
    close: () => client.close()
  }
}

export const textOf = (r: CallToolResult): string => {
  const first = r.content[0]
  if (first === undefined || first.type !== "text") throw new Error("no text content")
  return first.text
}

export const structured = <T = Record<string, unknown>>(r: CallToolResult): T => r.structuredContent as T
