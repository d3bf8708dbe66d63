/**
 * The two listeners of `groundnote serve`: the ops listener on <data dir>/ops.sock, built first,
 * then the public listener on host:port. A socket served by another process (or a file in its
 * place) so refuses start before any port opens — Layer.merge would build the two at once, and a
 * taken port could answer first.
 */
import { Layer } from "effect"
import { OpsListenerLive } from "./ops-listener.js"
import { publicListener } from "./server.js"

export const serviceListeners = (host: string, port: number) => publicListener(host, port).pipe(Layer.provideMerge(OpsListenerLive))
