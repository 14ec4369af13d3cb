// The bare-Koa reference `npm run bench` compares the service with, served over HTTP: the app of
// bare-koa-app.ts (Koa + @koa/router + koa-bodyparser doing the same work per request as the
// service, with the least glue Koa needs). The service should cost little more than this.
//
//   DATABASE_PATH=file.db PORT=0 SECRET_KEY=<hex> node --import tsx scripts/bench/reference-koa.ts
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bareKoaApp } from './bare-koa-app.js';
import { referenceWork } from './reference-work.js';

const work = referenceWork();
const server = createServer(bareKoaApp(work).callback());
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://${address}:${port}` })}\n`);
});

const stop = () =>
  server.close(() => {
    work.close();
    process.exit(0);
  });
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
