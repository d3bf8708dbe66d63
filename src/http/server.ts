/**
 * The public listener: the routes of app.ts served on host:port (port 0: a free port; read it from
 * HttpServer.address). main.ts runs it with the configured host and port over ServicesLive;
 * tests run it on a free loopback port with their own layers.
 */
import { createServer } from "node:http"
import { HttpLayerRouter } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { AppRoutes } from "./app.js"

export const publicListener = (host: string, port: number) =>
  HttpLayerRouter.serve(AppRoutes, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host, port }))
  )
