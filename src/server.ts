// The HTTP server around the app, with the time limits that protect it from slow clients.
import { createServer, type Server } from 'node:http';
import type Koa from 'koa';
import type { Config } from './config.js';

export function createHttpServer(app: Koa<any, any>, config: Pick<Config, 'requestTimeoutMs'>): Server {
  // Node checks request deadlines on this interval (30 s by default): keep it well under the deadline.
  const connectionsCheckingInterval = Math.min(30_000, Math.max(250, Math.floor(config.requestTimeoutMs / 4)));
  const server = createServer({ connectionsCheckingInterval }, app.callback());
  // A client that never finishes sending its request (headers and body) gets 408 and is cut off.
  server.requestTimeout = config.requestTimeoutMs;
  server.headersTimeout = Math.min(config.requestTimeoutMs, 15_000);
  // Idle keep-alive connections are closed after a while so they cannot pile up.
  server.keepAliveTimeout = 5_000;
  return server;
}
